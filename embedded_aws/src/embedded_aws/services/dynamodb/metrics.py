"""AWS/DynamoDB throttling metrics for the faults `embedded_aws/faults.py` injects (DynamoDB itself is
never throttled locally): a throttled request counts once in ThrottledRequests (TableName,
Operation) and once per table in ReadThrottleEvents or WriteThrottleEvents (TableName).
Other injected faults (5xx) publish nothing, as on AWS (they are SystemErrors, not throttles).
"""

from __future__ import annotations

import time

from embedded_aws.services.cloudwatch.metrics import datum, publish

NAMESPACE = "AWS/DynamoDB"
THROTTLING_CODES = frozenset(
    {"ProvisionedThroughputExceededException", "ThrottlingException", "RequestLimitExceeded"}
)
READS = frozenset({"GetItem", "BatchGetItem", "Query", "Scan", "TransactGetItems"})


def record_fault(action: str, tables: list[str], code: str, account_id: str, region: str) -> None:
    if code not in THROTTLING_CODES:
        return
    now = time.time()
    events = "ReadThrottleEvents" if action in READS else "WriteThrottleEvents"
    publish(
        account_id,
        region,
        NAMESPACE,
        [
            member
            for table in tables
            for member in (
                datum("ThrottledRequests", 1, "Count", {"TableName": table, "Operation": action}, now),
                datum(events, 1, "Count", {"TableName": table}, now),
            )
        ],
    )
