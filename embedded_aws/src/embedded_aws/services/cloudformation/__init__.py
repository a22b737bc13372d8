"""CloudFormation: custom resources with their whole lifecycle, deletes of resources already gone, GetAtt as on AWS."""
