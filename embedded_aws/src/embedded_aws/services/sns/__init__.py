"""SNS: the CloudFormation types moto skips (subscriptions, topic policies)."""
