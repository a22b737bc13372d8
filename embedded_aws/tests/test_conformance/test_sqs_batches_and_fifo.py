"""SQS batches, limits, receipt handles, receive attributes and FIFO against AWS's recorded answers
(recordings_sqs.py): per-entry and whole-batch refusals, MaximumMessageSize, expired receipt
handles, deduplication and its scope, and a group held back by a message in flight."""

from __future__ import annotations

import pytest

from local.session import wait_for
from test_conformance.recorded import answer
from test_conformance.recordings import check
from test_conformance.test_sqs_and_move_tasks import new_queue, refused

pytestmark = [pytest.mark.e2e, pytest.mark.long_wait(7)]  # visibility timeouts

FIFO = {"FifoQueue": "true"}


def receive(sqs, url: str, **kwargs) -> dict:
    return answer(sqs.receive_message(QueueUrl=url, **kwargs))


def visible_again(sqs, url: str, count: int) -> None:
    """Wait until `count` messages of the queue are visible (their visibility timeout passed)."""

    def visible() -> bool:
        attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages"])
        return int(attributes["Attributes"]["ApproximateNumberOfMessages"]) >= count

    wait_for(visible, timeout=10, interval=0.1, what=f"{count} message(s) visible again")


def test_batches_and_message_size_limits(emulator):
    """An entry over the queue's MaximumMessageSize fails alone; a batch over 1 MiB, more than ten
    visibility changes and invalid entry ids fail whole; attributes count towards the size."""
    sqs = emulator.client("sqs")
    url, _ = new_queue(emulator, "rec-size", MaximumMessageSize="1024")
    check(
        "sqs.batch-entry-over-queue-maximum",
        answer(
            sqs.send_message_batch(
                QueueUrl=url,
                Entries=[
                    {"Id": "fits", "MessageBody": "a" * 1024},
                    {"Id": "too-long", "MessageBody": "a" * 1025},
                ],
            )
        ),
    )
    attribute = {"k": {"DataType": "String", "StringValue": "x"}}  # 8 bytes: name, type, value
    sqs.send_message(QueueUrl=url, MessageBody="a" * 1024)
    check(
        "sqs.send-over-queue-maximum",
        refused(lambda: sqs.send_message(QueueUrl=url, MessageBody="a" * 1017, MessageAttributes=attribute)),
    )
    sqs.set_queue_attributes(QueueUrl=url, Attributes={"MaximumMessageSize": "2048"})
    check(
        "sqs.batch-at-queue-maximum",
        answer(
            sqs.send_message_batch(
                QueueUrl=url,
                Entries=[
                    {"Id": "1", "MessageBody": "a" * 2040, "MessageAttributes": attribute},
                    {"Id": "2", "MessageBody": "a"},
                ],
            )
        ),
    )
    plain_url, _ = new_queue(emulator, "rec-batch-size")
    check(
        "sqs.batch-over-one-mebibyte",
        refused(
            lambda: sqs.send_message_batch(
                QueueUrl=plain_url,
                Entries=[
                    {"Id": "1", "MessageBody": "a" * (1_048_576 - 8), "MessageAttributes": attribute},
                    {"Id": "2", "MessageBody": "a"},
                ],
            )
        ),
    )
    check(
        "sqs.change-visibility-batch-too-many",
        refused(
            lambda: sqs.change_message_visibility_batch(
                QueueUrl=url,
                Entries=[
                    {"Id": str(n), "ReceiptHandle": f"handle-{n}", "VisibilityTimeout": 123}
                    for n in range(20)
                ],
            )
        ),
    )
    for case, entry_id in (
        ("sqs.delete-batch-invalid-id[empty]", ""),
        ("sqs.delete-batch-invalid-id[colon]", "invalid:id"),
        ("sqs.delete-batch-invalid-id[too-long]", "testLongId" * 10),
    ):
        check(
            case,
            refused(
                lambda entry_id=entry_id: sqs.delete_message_batch(
                    QueueUrl=url, Entries=[{"Id": entry_id, "ReceiptHandle": "testHandle1"}]
                )
            ),
        )


def test_fifo_batches_without_group_or_deduplication_id(emulator):
    """A FIFO batch with an entry lacking its group id, or its deduplication id, is refused whole."""
    sqs = emulator.client("sqs")
    url, _ = new_queue(emulator, "rec-fifo-batch", **FIFO, ContentBasedDeduplication="false")
    first = {
        "Id": "m-1",
        "MessageBody": "messageBody",
        "MessageGroupId": "test-group",
        "MessageDeduplicationId": "d-1",
    }
    check(
        "sqs.batch-fifo-without-group",
        refused(
            lambda: sqs.send_message_batch(
                QueueUrl=url,
                Entries=[first, {"Id": "m-2", "MessageBody": "messageBody", "MessageDeduplicationId": "d-2"}],
            )
        ),
    )
    check(
        "sqs.batch-fifo-without-deduplication",
        refused(
            lambda: sqs.send_message_batch(
                QueueUrl=url,
                Entries=[first, {"Id": "m-2", "MessageBody": "messageBody", "MessageGroupId": "test-group"}],
            )
        ),
    )


def test_receipt_handles_after_their_visibility_timeout(emulator):
    """A standard queue's expired handle still deletes and changes visibility; a FIFO queue's is
    refused as expired, unless its visibility was extended first."""
    sqs = emulator.client("sqs")
    url, _ = new_queue(emulator, "rec-handle", VisibilityTimeout="1")
    sqs.send_message(QueueUrl=url, MessageBody="foobar")
    handle = sqs.receive_message(QueueUrl=url)["Messages"][0]["ReceiptHandle"]
    visible_again(sqs, url, 1)
    check(
        "sqs.change-visibility-after-visibility-timeout",
        answer(sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=handle, VisibilityTimeout=2)),
    )
    sqs.delete_message(QueueUrl=url, ReceiptHandle=handle)
    check("sqs.delete-after-visibility-timeout", receive(sqs, url))

    fifo_url, _ = new_queue(
        emulator, "rec-handle", **FIFO, VisibilityTimeout="1", ContentBasedDeduplication="true"
    )
    sqs.send_message(QueueUrl=fifo_url, MessageBody="foobar", MessageGroupId="1")
    handle = sqs.receive_message(QueueUrl=fifo_url)["Messages"][0]["ReceiptHandle"]
    visible_again(sqs, fifo_url, 1)
    check(
        "sqs.fifo-delete-after-visibility-timeout",
        refused(lambda: sqs.delete_message(QueueUrl=fifo_url, ReceiptHandle=handle)),
    )

    extended_url, _ = new_queue(
        emulator, "rec-extend", **FIFO, VisibilityTimeout="1", ContentBasedDeduplication="true"
    )
    sqs.send_message(QueueUrl=extended_url, MessageBody="foobar", MessageGroupId="1")
    sqs.send_message(QueueUrl=extended_url, MessageBody="canary", MessageGroupId="2")
    messages = sqs.receive_message(QueueUrl=extended_url, MaxNumberOfMessages=10)["Messages"]
    handles = {message["Body"]: message["ReceiptHandle"] for message in messages}
    sqs.change_message_visibility(QueueUrl=extended_url, ReceiptHandle=handles["foobar"], VisibilityTimeout=5)
    # The canary, received with it, shows when the first timeout has passed.
    visible_again(sqs, extended_url, 1)
    (canary,) = sqs.receive_message(QueueUrl=extended_url)["Messages"]
    sqs.delete_message(QueueUrl=extended_url, ReceiptHandle=canary["ReceiptHandle"])
    sqs.delete_message(QueueUrl=extended_url, ReceiptHandle=handles["foobar"])
    check("sqs.fifo-delete-after-extended-visibility", receive(sqs, extended_url))


def test_fifo_receive_attributes(emulator):
    """A FIFO message's system attributes: group, deduplication id and the sequence number its
    send answered, the receive count growing with each receive."""
    sqs = emulator.client("sqs")
    url, _ = new_queue(
        emulator,
        "rec-fifo-attrs",
        **FIFO,
        ContentBasedDeduplication="true",
        VisibilityTimeout="0",
        DeduplicationScope="messageGroup",
        FifoThroughputLimit="perMessageGroupId",
    )
    sent = answer(
        sqs.send_message(
            QueueUrl=url,
            MessageBody="message-body-1",
            MessageGroupId="group-1",
            MessageDeduplicationId="dedup-1",
        )
    )
    attributes = []
    for _ in range(2):
        (message,) = sqs.receive_message(QueueUrl=url, AttributeNames=["All"], WaitTimeSeconds=10)["Messages"]
        found = message["Attributes"]
        if found.get("SequenceNumber") == sent.get("SequenceNumber"):
            found["SequenceNumber"] = "the one SendMessage answered"
        attributes.append(found)
    check("sqs.fifo-receive-attributes", {"sent": sent, "received": attributes})


def send_twice(sqs, url: str, groups: tuple[str, str], explicit: bool, delete_first: bool) -> list[dict]:
    """Send the same body twice (in `groups`), receiving after each send (deleting the first
    copy if asked): the two receives' answers."""
    extra = {"MessageDeduplicationId": "dedup1"} if explicit else {}
    answers = []
    for group in groups:
        sqs.send_message(QueueUrl=url, MessageBody='{"foo": "bar"}', MessageGroupId=group, **extra)
        answers.append(receive(sqs, url, MaxNumberOfMessages=1))
        if delete_first and "Messages" in answers[-1]:
            sqs.delete_message(QueueUrl=url, ReceiptHandle=answers[-1]["Messages"][0]["ReceiptHandle"])
    return answers


@pytest.mark.parametrize(
    ("name", "after_delete", "in_another_group"),
    [
        (
            "content-based",
            "sqs.fifo-duplicate-after-delete[content-based]",
            "sqs.fifo-duplicate-in-another-group[content-based]",
        ),
        (
            "explicit",
            "sqs.fifo-duplicate-after-delete[explicit]",
            "sqs.fifo-duplicate-in-another-group[explicit]",
        ),
    ],
)
def test_fifo_deduplication_within_the_window(emulator, name, after_delete, in_another_group):
    """A duplicate is not delivered within five minutes, whether or not the first copy was
    deleted, and (DeduplicationScope queue) whatever its group."""
    sqs = emulator.client("sqs")
    attributes = {**FIFO, **({"ContentBasedDeduplication": "true"} if name == "content-based" else {})}
    url, _ = new_queue(emulator, "rec-dedup", **attributes)
    check(
        after_delete,
        send_twice(sqs, url, ("group-1", "group-1"), name == "explicit", delete_first=True),
    )
    url, _ = new_queue(emulator, "rec-dedup-groups", **attributes)
    check(
        in_another_group,
        send_twice(sqs, url, ("group-1", "group-2"), name == "explicit", delete_first=False),
    )


def sent_in_groups(sqs, url: str, sends: list[tuple[str, str]], explicit: bool = True) -> list[dict]:
    """Each (body, group) sent with one deduplication id (or content-based), received, and deleted:
    the receives' answers."""
    answers = []
    for body, group in sends:
        extra = {"MessageDeduplicationId": "same-dedup"} if explicit else {}
        sqs.send_message(QueueUrl=url, MessageBody=body, MessageGroupId=group, **extra)
        answers.append(receive(sqs, url))
        for message in answers[-1].get("Messages", []):
            sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
    return answers


def test_fifo_deduplication_scope(emulator):
    """DeduplicationScope queue deduplicates an id across groups, messageGroup within a group only;
    ids sent under messageGroup do not hold back a send after the scope is set back to queue."""
    sqs = emulator.client("sqs")
    url, _ = new_queue(emulator, "rec-scope-queue", **FIFO)
    check(
        "sqs.fifo-duplicate-in-another-group-after-delete",
        sent_in_groups(sqs, url, [("Test", "group1"), ("Test", "group2")]),
    )
    high_throughput = {"DeduplicationScope": "messageGroup", "FifoThroughputLimit": "perMessageGroupId"}
    url, _ = new_queue(emulator, "rec-scope-group", **FIFO, **high_throughput)
    check(
        "sqs.fifo-message-group-scope", sent_in_groups(sqs, url, [("Test1", "group1"), ("Test2", "group2")])
    )
    url, _ = new_queue(
        emulator,
        "rec-scope-group-cbd",
        **FIFO,
        DeduplicationScope="messageGroup",
        ContentBasedDeduplication="true",
    )
    check(
        "sqs.fifo-message-group-scope-content-based",
        sent_in_groups(sqs, url, [("Test", "group1"), ("Test", "group2")], explicit=False),
    )
    url, _ = new_queue(emulator, "rec-scope-back", **FIFO, **high_throughput)
    answers = sent_in_groups(sqs, url, [("Test1", "group1"), ("Test2", "group2")])
    sqs.set_queue_attributes(
        QueueUrl=url, Attributes={"DeduplicationScope": "queue", "FifoThroughputLimit": "perQueue"}
    )
    check("sqs.fifo-scope-back-to-queue", answers + sent_in_groups(sqs, url, [("Test3", "group3")]))


def test_fifo_deduplication_scope_changed_to_message_group(emulator):
    """A queue-scope id still deduplicates other groups after the scope is set to messageGroup; a
    new id then counts per group here (AWS went on deduplicating it across groups: differs)."""
    sqs = emulator.client("sqs")
    url, _ = new_queue(emulator, "rec-scope-change", **FIFO, DeduplicationScope="queue")
    answers = sent_in_groups(sqs, url, [("Test1", "group1")])
    sqs.send_message(
        QueueUrl=url, MessageBody="Test2", MessageGroupId="group2", MessageDeduplicationId="same-dedup"
    )
    answers.append(receive(sqs, url, VisibilityTimeout=0))
    sqs.set_queue_attributes(
        QueueUrl=url,
        Attributes={"DeduplicationScope": "messageGroup", "FifoThroughputLimit": "perMessageGroupId"},
    )
    answers.append(receive(sqs, url))
    answers += sent_in_groups(sqs, url, [("Test3", "group3")])
    for body, group in (("Test4", "group4"), ("Test5", "group5")):
        sqs.send_message(
            QueueUrl=url, MessageBody=body, MessageGroupId=group, MessageDeduplicationId="dedup_2"
        )
        answers.append(receive(sqs, url))
        for message in answers[-1].get("Messages", []):
            sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
    check("sqs.fifo-scope-to-message-group", answers)


@pytest.mark.parametrize(
    ("position", "case"),
    [
        (0, "sqs.fifo-group-after-extending-message-0"),
        (1, "sqs.fifo-group-after-extending-message-1"),
        (2, "sqs.fifo-group-after-extending-message-2"),
    ],
)
def test_a_group_is_held_back_from_the_message_whose_visibility_was_extended(emulator, position, case):
    """Three messages of a group received together; one's visibility extended: once the others are
    visible again, a receive returns those before it in the group, not it or those after it."""
    sqs = emulator.client("sqs")
    url, _ = new_queue(emulator, "rec-group-extend", **FIFO, VisibilityTimeout="1")
    for body in ("foo", "bar", "baz"):
        sqs.send_message(QueueUrl=url, MessageBody=body, MessageGroupId="1", MessageDeduplicationId=body)
    first = receive(sqs, url, MaxNumberOfMessages=5)
    handle = first["Messages"][position]["ReceiptHandle"]
    sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=handle, VisibilityTimeout=4)
    visible_again(sqs, url, 2)
    check(
        case,
        [first, receive(sqs, url, MaxNumberOfMessages=5)],
    )
