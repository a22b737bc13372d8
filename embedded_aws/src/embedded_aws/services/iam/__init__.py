"""IAM as AWS evaluates it where moto differs (resource ARNs, action names, signatures), and managed-policy deletes."""
