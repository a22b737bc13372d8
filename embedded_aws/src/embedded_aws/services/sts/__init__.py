"""STS: AssumeRole's trust policies evaluated as IAM evaluates them (moto compared principals literally)."""
