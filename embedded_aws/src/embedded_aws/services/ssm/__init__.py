"""SSM Parameter Store: requests authorized against the parameter's ARN (moto checked `*`)."""
