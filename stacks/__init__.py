"""CDK constructs and the stack of the idempotent order consumer."""
