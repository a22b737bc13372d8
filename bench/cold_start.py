"""One fresh process: import a handler, let it create its client, handle one message, then print
a marker line. The parent times process start to that line (`bench.handler_bench.cold_starts`)."""

from __future__ import annotations

import sys
from typing import Any

MARKER = "BENCH-FIRST-RESULT "


def main(variant: str, order_id: str) -> None:
    import json

    if variant == "bare":
        import os

        import boto3

        client = boto3.client("dynamodb")
        client.put_item(
            TableName=os.environ["TABLE_NAME"],
            Item={"id": {"S": order_id}, "quantity": {"N": "3"}, "total_cents": {"N": "850"}},
            ConditionExpression="attribute_not_exists(id)",
            ReturnValuesOnConditionCheckFailure="ALL_OLD",
        )
        result: dict[str, Any] = {"batchItemFailures": []}
    else:
        from bench.variants import BenchContext, handler_of, sqs_event

        result = handler_of(variant)(sqs_event(order_id), BenchContext())
    print(MARKER + json.dumps(result), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
