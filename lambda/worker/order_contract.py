"""What the worker, the stack and the operations tools agree on, written once: the environment the
worker reads, the namespace of its decision metrics and the decisions themselves. Shipped with
the worker (standard library only); the stack and `ops` read it through stacks/lambda_code.py."""

# Environment variables the worker reads: its orders table, and the namespace of its metrics.
TABLE_NAME_ENV = "TABLE_NAME"
METRICS_NAMESPACE_ENV = "METRICS_NAMESPACE"

# One namespace for every deployment: the worker's function name is the metrics' one dimension.
METRICS_NAMESPACE = "IdempotentOrderConsumer"

# The decision metrics the worker emits (embedded metric format), one per kind of outcome.
DECISIONS = ("Accepted", "Duplicate", "Conflict", "Malformed", "Error")
