"""The conformance cases of SQS batches, limits, receipt handles, receive attributes and FIFO
(deduplication, its scope, group blocking): AWS's answers as LocalStack recorded them in
`tests/aws/services/sqs/test_sqs.snapshot.json` (each case names its snapshot key and validation
date), reduced to what does not vary between runs. recordings.py counts them with its own.

Chosen by who calls: `ops dlq redrive` reads per-entry batch failures, the Lambda host deletes
and extends receipt handles, and a FIFO consumer relies on deduplication and group order.
"""

from __future__ import annotations

from test_conformance.recorded import ABSENT, ANY, Case, Exactly, Like, Recording

SQS = "tests/aws/services/sqs/test_sqs.snapshot.json"
PROVIDER = "TestSqsProvider::"


def error(code: str, message: object, query_code: str, status: int = 400) -> dict:
    """An SQS error in the JSON protocol, as boto3 shows it."""
    return {
        "Error": {"Code": code, "Message": message, "QueryErrorCode": query_code, "Type": "Sender"},
        "HTTPStatusCode": status,
    }


def received(*bodies: str) -> Exactly:
    """A ReceiveMessage answer with these bodies, in order (none: no Messages key at all)."""
    messages = [
        Exactly({"Body": body, "MD5OfBody": ANY, "MessageId": ANY, "ReceiptHandle": ANY}) for body in bodies
    ]
    return Exactly({"Messages": messages if bodies else ABSENT, "HTTPStatusCode": 200})


EMPTY = Exactly({"HTTPStatusCode": 200})
INVALID_ID = error(
    "AWS.SimpleQueueService.InvalidBatchEntryId",
    "A batch entry id can only contain alphanumeric characters, hyphens and underscores. "
    "It can be at most 80 letters long.",
    "InvalidBatchEntryId",
)


def recording(test: str, response: str, validated: str) -> Recording:
    return Recording(SQS, PROVIDER + test, response, validated)


SQS_CASES = [
    # --- batches and limits ---------------------------------------------------------------
    Case(
        "sqs.batch-entry-over-queue-maximum",
        recording("test_send_batch_message_size", "send-message-batch-result", "2024-04-30"),
        Exactly(
            {
                "Failed": [
                    Exactly(
                        {
                            "Code": "InvalidParameterValue",
                            "Id": "too-long",
                            "Message": "One or more parameters cannot be validated. Reason: Message must be "
                            "shorter than 1024 bytes.",
                            "SenderFault": True,
                        }
                    )
                ],
                "Successful": [
                    Exactly(
                        {
                            "Id": "fits",
                            "MD5OfMessageBody": "c9a34cfc85d982698c6ac89f76071abd",
                            "MessageId": ANY,
                        }
                    )
                ],
                "HTTPStatusCode": 200,
            }
        ),
        notes="LocalStack's own run answers this entry's Code and Message differently (the test skips them); "
        "the values here are AWS's",
    ),
    Case(
        "sqs.batch-over-one-mebibyte",
        recording(
            "test_send_message_batch_with_oversized_contents[sqs]",
            "send_oversized_message_batch",
            "2025-08-19",
        ),
        error(
            "AWS.SimpleQueueService.BatchRequestTooLong",
            "Batch requests cannot be longer than 1048576 bytes. You have sent 1048577 bytes.",
            "BatchRequestTooLong",
        ),
    ),
    Case(
        "sqs.batch-at-queue-maximum",
        recording(
            "test_send_message_batch_with_oversized_contents_with_updated_maximum_message_size[sqs]",
            "send_oversized_message_batch",
            "2024-04-30",
        ),
        Exactly(
            {
                "Successful": [
                    Exactly(
                        {
                            "Id": "1",
                            "MD5OfMessageAttributes": "a45daa70926828a2f0a1db3418e6feb4",
                            "MD5OfMessageBody": "f44facf5a7ee0af446ecf3e0f854441e",
                            "MessageId": ANY,
                        }
                    ),
                    Exactly(
                        {"Id": "2", "MD5OfMessageBody": "0cc175b9c0f1b6a831c399e269772661", "MessageId": ANY}
                    ),
                ],
                "HTTPStatusCode": 200,
            }
        ),
        notes="body and attributes together exactly at the queue's MaximumMessageSize (2,048 bytes) are accepted",
    ),
    Case(
        "sqs.send-over-queue-maximum",
        recording(
            "test_send_message_with_updated_maximum_message_size[sqs]", "send_oversized_message", "2024-04-30"
        ),
        error(
            "InvalidParameterValue",
            "One or more parameters are invalid. Reason: Message must be shorter than 1024 bytes.",
            "InvalidParameterValueException",
        ),
        notes="the body alone is 1,017 bytes: the attribute's name, type and value count towards the size",
    ),
    Case(
        "sqs.change-visibility-batch-too-many",
        recording(
            "test_change_message_visibility_batch_with_too_large_batch[sqs]", "error_response", "2024-04-30"
        ),
        error(
            "AWS.SimpleQueueService.TooManyEntriesInBatchRequest",
            "Maximum number of entries per request are 10. You have sent 20.",
            "TooManyEntriesInBatchRequest",
        ),
    ),
    *[
        Case(
            f"sqs.delete-batch-invalid-id[{name}]",
            recording(f"test_delete_message_batch_invalid_msg_id[sqs-{key}]", "error_response", "2024-04-30"),
            INVALID_ID,
        )
        for name, key in (("empty", ""), ("colon", "invalid:id"), ("too-long", "testLongId" * 10))
    ],
    # --- receipt handles --------------------------------------------------------------------
    Case(
        "sqs.delete-after-visibility-timeout",
        recording(
            "test_delete_after_visibility_timeout[sqs]", "delete_after_timeout_queue_empty", "2025-03-28"
        ),
        EMPTY,
        notes="a standard queue's expired handle still deletes its message: the queue is empty afterwards",
    ),
    Case(
        "sqs.change-visibility-after-visibility-timeout",
        recording(
            "test_change_message_visibility_after_visibility_timeout_expiration[sqs]",
            "visibility_timeout_expired",
            "2024-04-30",
        ),
        EMPTY,
    ),
    Case(
        "sqs.fifo-delete-after-visibility-timeout",
        recording(
            "test_fifo_delete_after_visibility_timeout[sqs]", "delete_after_timeout_fifo", "2025-03-28"
        ),
        error(
            "InvalidParameterValue",
            Like(
                r"Value \S+ for parameter ReceiptHandle is invalid\. Reason: The receipt handle has expired\."
            ),
            "InvalidParameterValueException",
        ),
    ),
    Case(
        "sqs.fifo-delete-after-extended-visibility",
        recording(
            "test_fifo_delete_after_visibility_timeout_extended[sqs]",
            "delete_after_timeout_fifo_extended",
            "2025-10-05",
        ),
        EMPTY,
    ),
    # --- receive attributes -----------------------------------------------------------------
    Case(
        "sqs.fifo-receive-attributes",
        recording(
            "test_fifo_message_attributes[sqs]",
            "send_message, receive_message_0, receive_message_1",
            "2024-04-30",
        ),
        {
            "sent": Exactly(
                {
                    "MD5OfMessageBody": "19c9e282d65f9733bc6b35d50062c7ee",
                    "MessageId": ANY,
                    "SequenceNumber": Like(r"\d+"),
                    "HTTPStatusCode": 200,
                }
            ),
            "received": [
                Exactly(
                    {
                        "ApproximateFirstReceiveTimestamp": ANY,
                        "ApproximateReceiveCount": count,
                        "MessageDeduplicationId": "dedup-1",
                        "MessageGroupId": "group-1",
                        "SenderId": ANY,
                        "SentTimestamp": ANY,
                        "SequenceNumber": "the one SendMessage answered",
                    }
                )
                for count in ("1", "2")
            ],
        },
    ),
    Case(
        "sqs.batch-fifo-without-group",
        recording(
            "test_send_batch_missing_message_group_id_for_fifo_queue[sqs]",
            "test_missing_message_group_id_for_fifo_queue",
            "2024-04-30",
        ),
        error(
            "InvalidParameterValue",
            "The request must contain the parameter MessageGroupId.",
            "InvalidParameterValueException",
        ),
        notes="a batch answers InvalidParameterValue where SendMessage answers MissingParameter "
        "(sqs.fifo-without-group); the whole batch is refused",
    ),
    Case(
        "sqs.batch-fifo-without-deduplication",
        recording(
            "test_send_batch_missing_deduplication_id_for_fifo_queue[sqs]",
            "test_missing_deduplication_id_for_fifo_queue",
            "2024-04-30",
        ),
        error(
            "InvalidParameterValue",
            "The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided "
            "explicitly",
            "InvalidParameterValueException",
        ),
    ),
    # --- FIFO deduplication -----------------------------------------------------------------
    *[
        Case(
            f"sqs.fifo-duplicate-after-delete[{name}]",
            recording(
                f"test_fifo_deduplication_arrives_once_after_delete[sqs-{key}]",
                "get-messages, get-messages-duplicate",
                "2024-04-30",
            ),
            [received('{"foo": "bar"}'), EMPTY],
        )
        for name, key in (("content-based", "True"), ("explicit", "False"))
    ],
    *[
        Case(
            f"sqs.fifo-duplicate-in-another-group[{name}]",
            recording(
                f"test_fifo_deduplication_not_on_message_group_id[sqs-{key}]",
                "get-messages, get-dedup-messages",
                "2024-04-30",
            ),
            [received('{"foo": "bar"}'), EMPTY],
        )
        for name, key in (("content-based", "True"), ("explicit", "False"))
    ],
    Case(
        "sqs.fifo-duplicate-in-another-group-after-delete",
        recording(
            "test_sqs_fifo_same_dedup_id_different_message_groups[sqs]",
            "same-dedup-different-grp-1, same-dedup-different-grp-2",
            "2024-04-30",
        ),
        [received("Test"), EMPTY],
        notes="DeduplicationScope is queue (the default): the id is deduplicated across groups",
    ),
    Case(
        "sqs.fifo-message-group-scope",
        recording(
            "test_fifo_high_throughput_ordering[sqs]",
            "same-dedup-different-grp-1, same-dedup-different-grp-2",
            "2024-04-30",
        ),
        [received("Test1"), received("Test2")],
        notes="DeduplicationScope messageGroup, FifoThroughputLimit perMessageGroupId",
    ),
    Case(
        "sqs.fifo-message-group-scope-content-based",
        recording(
            "test_sqs_fifo_message_group_scope_no_throughput_setting[sqs]",
            "same-dedup-different-grp-1, same-dedup-different-grp-2",
            "2024-05-24",
        ),
        [received("Test"), received("Test")],
        notes="DeduplicationScope messageGroup without FifoThroughputLimit, content-based",
    ),
    Case(
        "sqs.fifo-scope-back-to-queue",
        recording(
            "test_fifo_change_to_regular_throughput_after_creation[sqs]",
            "same-dedup-different-grp-1, same-dedup-different-grp-2, same-dedup-different-grp-regular-throughput",
            "2025-08-19",
        ),
        [received("Test1"), received("Test2"), received("Test3")],
        notes="ids sent under the messageGroup scope do not deduplicate a send after the queue is set back to "
        "the queue scope",
    ),
    Case(
        "sqs.fifo-scope-to-message-group",
        recording(
            "test_fifo_change_to_high_throughput_after_creation[sqs]",
            "same-dedup-different-grp-1, same-dedup-different-grp-2, same-dedup-different-grp-high-throughput, "
            "same-dedup-different-grp-high-throughput-2, new-dedup2-high-throughput, same-dedup2-high-throughput",
            "2025-08-19",
        ),
        [received("Test1"), EMPTY, EMPTY, EMPTY, received("Test4"), EMPTY],
        local=[received("Test1"), EMPTY, EMPTY, EMPTY, received("Test4"), received("Test5")],
        why="AWS went on deduplicating a new id across groups after the queue was set to the messageGroup "
        "scope (LocalStack's test notes the change did not seem to take effect; SetQueueAttributes: a change "
        "can take up to 60 seconds to propagate); locally the new scope applies to ids sent after it at once. "
        "Nothing here changes a FIFO queue's scope after creating it",
    ),
    # --- FIFO group blocking ----------------------------------------------------------------
    *[
        Case(
            f"sqs.fifo-group-after-extending-message-{position}",
            recording(
                f"test_fifo_group_visibility_extends_with_change_message_visibility[sqs-{position}-visible]",
                "receive_all_messages, some-messages-invisible",
                "2025-11-19",
            ),
            [received("foo", "bar", "baz"), received(*("foo", "bar")[:position])],
            notes="the message whose visibility was extended holds back itself and those after it in its "
            "group, not those before it",
        )
        for position in (0, 1, 2)
    ],
]
