"""CloudFormation: custom resources with their whole lifecycle, failed resources rolled back as on AWS, deletes of resources already gone, GetAtt as on AWS."""
