"""SQS message move tasks (dead-letter queue redrive) for the embedded AWS: StartMessageMoveTask,
ListMessageMoveTasks and CancelMessageMoveTask, which moto 5.2.5 does not implement.

- moto's receive-time redrive moves the same Message object into the dead-letter queue; when a
  message object arrives in a second queue, the queue it came from is written on it
  (dead_letters.py), so a task without DestinationArn can send it back there.
- A task is a thread of the emulator process. It takes the messages that were visible in the
  DLQ when it started, oldest first, at most MaxNumberOfMessagesPerSecond (500 when unset), and
  for each sends a new message (same body, attributes) to the destination, then deletes the old.
- It takes a message the way a consumer does, through the backend's ReceiveMessage (serialized
  by the emulator with every other SQS call): a message a consumer holds is skipped until it is
  visible again, and no message is ever both moved and handed to a consumer. While the task's
  own thread receives, it sees only the messages it still has to move (`_TaskView`).
- IAM: the three actions are authorized on the source queue's ARN; StartMessageMoveTask also
  needs what AWS documents the redrive needs (receive, delete, get attributes on the DLQ; send
  on the destination, or on every queue the DLQ serves when there is none).

docs/local-fidelity.md ("SQS message move tasks") lists the rules and the tests that pin them.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import math
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from embedded_aws.compat.internals import GET_ACTION, QUEUE_MESSAGES
from embedded_aws.compat.registry import T, declare, install, reads
from embedded_aws.services.sqs import dead_letters, fifo

log = logging.getLogger("embedded_aws.sqs")

MAX_RATE = 500  # messages per second; also the pace of a task started without a rate
MAX_RESULTS = 10
BATCH = 10  # messages taken from the DLQ in one receive
CLAIM_SECONDS = 30  # a taken message stays invisible this long if the task dies mid-move

RUNNING, COMPLETED, CANCELLING, CANCELLED, FAILED = (
    "RUNNING",
    "COMPLETED",
    "CANCELLING",
    "CANCELLED",
    "FAILED",
)
ACTIVE = (RUNNING, CANCELLING)

# FailureReason values (the moto PR's; AWS documents none).
NO_SOURCE = "CouldNotDetermineMessageSource"
NO_QUEUE = "AWS.SimpleQueueService.NonExistentQueue"

# The queue a message is in (dead_letters.py notes the one whose redrive put it in a DLQ).
_HOLDER_ATTRIBUTE = "_held_by_queue_arn"

ACTIONS = ("StartMessageMoveTask", "ListMessageMoveTasks", "CancelMessageMoveTask")


class MoveTaskError(Exception):
    """A request the API refuses: an SQS error code and its one-line message."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def invalid(message: str) -> MoveTaskError:
    return MoveTaskError("InvalidParameterValue", message)


# --- the rules, without moto (tests/unit/test_sqs_move_tasks.py) ------------------------------


@dataclass(frozen=True)
class QueueRef:
    region: str
    account: str
    name: str


def parse_queue_arn(arn: Any) -> QueueRef | None:
    """`arn:<partition>:sqs:<region>:<account>:<name>`, else None."""
    if not isinstance(arn, str):
        return None
    parts = arn.split(":")
    if len(parts) != 6 or parts[0] != "arn" or parts[2] != "sqs" or not all(parts[3:]):
        return None
    return QueueRef(parts[3], parts[4], parts[5])


def check_rate(value: Any) -> int | None:
    """MaxNumberOfMessagesPerSecond: absent, or a whole number 1..500."""
    if value is None:
        return None
    try:
        rate = int(value)
    except (TypeError, ValueError):
        rate = None
    if rate is None or str(rate) != str(value).strip() or not 1 <= rate <= MAX_RATE:
        raise invalid(
            f"Value {value} for parameter MaxNumberOfMessagesPerSecond is invalid. "
            f"Reason: Must be between 1 and {MAX_RATE}."
        )
    return rate


def check_max_results(value: Any) -> int:
    """ListMessageMoveTasks' MaxResults: 1 when absent, else a whole number 1..10."""
    if value is None:
        return 1
    try:
        count = int(value)
    except (TypeError, ValueError):
        count = None
    if count is None or str(count) != str(value).strip() or not 1 <= count <= MAX_RESULTS:
        raise invalid(
            f"Value {value} for parameter MaxResults is invalid. Reason: Must be between 1 and {MAX_RESULTS}."
        )
    return count


def encode_handle(task_id: str, source_arn: str) -> str:
    """An opaque TaskHandle that names its source queue (Cancel is authorized on that queue)."""
    return base64.b64encode(json.dumps({"taskId": task_id, "sourceArn": source_arn}).encode()).decode()


def decode_handle(handle: Any) -> tuple[str, str]:
    """(task id, source ARN) of a TaskHandle; InvalidParameterValue for anything else."""
    try:
        fields = json.loads(base64.b64decode(str(handle), validate=True))
        task_id, source_arn = fields["taskId"], fields["sourceArn"]
    except (binascii.Error, ValueError, TypeError, KeyError):
        raise invalid("Value for parameter TaskHandle is invalid.") from None
    if not isinstance(task_id, str) or parse_queue_arn(source_arn) is None:
        raise invalid("Value for parameter TaskHandle is invalid.")
    return task_id, source_arn


def allowed_by(elapsed: float, rate: int) -> int:
    """How many messages a task pacing `rate` per second may have moved `elapsed` s after its
    start: message k (from 0) goes no earlier than k / rate, so 20 at 10/s take 1.9 s."""
    return max(0, math.floor(elapsed * rate + 1e-9) + 1)


def due_at(moved: int, rate: int) -> float:
    """Seconds after the start when message number `moved` (from 0) may go."""
    return moved / rate


def oldest_first(messages: Iterable[Any]) -> list[Any]:
    """Messages in the order a task moves them: by SentTimestamp (a redriven message keeps its
    original one), ties in queue order."""
    return sorted(messages, key=lambda message: message.sent_timestamp or 0)


@dataclass
class MoveTask:
    """One StartMessageMoveTask: its parameters, its progress, and the messages it may move."""

    source_arn: str
    destination_arn: str | None
    rate: int | None
    members: set[str]  # ids of the messages visible in the DLQ at the start
    task_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    started_ms: int = field(default_factory=lambda: int(time.time() * 1000))
    status: str = RUNNING
    moved: int = 0
    failure_reason: str | None = None
    cancel_requested: threading.Event = field(default_factory=threading.Event)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.to_move = len(self.members)

    @property
    def handle(self) -> str:
        return encode_handle(self.task_id, self.source_arn)

    @property
    def pace(self) -> int:
        return self.rate or MAX_RATE

    def entry(self) -> dict[str, Any]:
        """The task as ListMessageMoveTasks shows it: TaskHandle only while RUNNING, the
        destination and rate only if given, FailureReason only when FAILED."""
        entry: dict[str, Any] = {
            "Status": self.status,
            "SourceArn": self.source_arn,
            "ApproximateNumberOfMessagesMoved": self.moved,
            "ApproximateNumberOfMessagesToMove": self.to_move,
            "StartedTimestamp": self.started_ms,
        }
        if self.status == RUNNING:
            entry["TaskHandle"] = self.handle
        if self.destination_arn is not None:
            entry["DestinationArn"] = self.destination_arn
        if self.rate is not None:
            entry["MaxNumberOfMessagesPerSecond"] = self.rate
        if self.status == FAILED:
            entry["FailureReason"] = self.failure_reason
        return entry

    def cancel(self) -> int:
        """RUNNING -> CANCELLING (the task's thread stops at the next message); the count moved."""
        with self._lock:
            if self.status != RUNNING:
                raise MoveTaskError("ResourceNotFoundException", "Task does not exist.")
            self.status = CANCELLING
            self.cancel_requested.set()
            return self.moved

    def finish(self, status: str, reason: str | None = None) -> None:
        """The end the thread reached; a task asked to cancel ends CANCELLED unless it failed."""
        with self._lock:
            if self.status == CANCELLING and status != FAILED:
                status = CANCELLED
            self.status, self.failure_reason = status, reason if status == FAILED else None


class MoveTasks:
    """Every task of one account and region, most recent last."""

    def __init__(self) -> None:
        self._tasks: list[MoveTask] = []
        self._lock = threading.Lock()

    def add(self, task: MoveTask) -> None:
        """Register `task` unless its source queue already has an active one."""
        with self._lock:
            if any(t.source_arn == task.source_arn and t.status in ACTIVE for t in self._tasks):
                raise invalid(
                    "There is already a task running. Only one active task is allowed for a "
                    "source queue arn at a given time."
                )
            self._tasks.append(task)

    def of(self, source_arn: str, limit: int) -> list[MoveTask]:
        with self._lock:
            return [t for t in reversed(self._tasks) if t.source_arn == source_arn][:limit]

    def find(self, task_id: str) -> MoveTask:
        with self._lock:
            for task in self._tasks:
                if task.task_id == task_id:
                    return task
        raise MoveTaskError("ResourceNotFoundException", "Task does not exist.")


_REGISTRIES: dict[tuple[str, str], MoveTasks] = {}
_REGISTRIES_LOCK = threading.Lock()


def registry(account: str, region: str) -> MoveTasks:
    with _REGISTRIES_LOCK:
        return _REGISTRIES.setdefault((account, region), MoveTasks())


# --- the operations, on moto's SQS backend ---------------------------------------------------


def _queue(backend: Any, arn: Any, parameter: str) -> Any:
    """The backend's queue for `arn`, or ResourceNotFoundException naming the parameter."""
    ref = parse_queue_arn(arn)
    queue = backend.queues.get(ref.name) if ref else None
    if ref is None or queue is None or (ref.account, ref.region) != (backend.account_id, backend.region_name):
        raise MoveTaskError(
            "ResourceNotFoundException",
            f"The resource that you specified for the {parameter} parameter doesn't exist.",
        )
    return queue


def dead_letter_sources(backend: Any, dlq: Any) -> list[Any]:
    """The queues whose redrive policy names `dlq`."""
    return [q for q in list(backend.queues.values()) if q.dead_letter_queue is dlq and q is not dlq]


def redrive_permissions(backend: Any, source_arn: Any, destination_arn: Any) -> list[tuple[str, str]]:
    """What AWS documents a redrive needs besides sqs:StartMessageMoveTask: receive, delete and
    get attributes on the DLQ, and send on the destination, or on each queue the DLQ serves."""
    checks = [
        (action, str(source_arn)) for action in ("ReceiveMessage", "DeleteMessage", "GetQueueAttributes")
    ]
    if destination_arn is not None:
        return [*checks, ("SendMessage", str(destination_arn))]
    ref = parse_queue_arn(source_arn)
    dlq = backend.queues.get(ref.name) if ref else None
    sources = dead_letter_sources(backend, dlq) if dlq is not None else []
    return checks + [("SendMessage", queue.queue_arn) for queue in sources]


def start(backend: Any, source_arn: Any, destination_arn: Any = None, rate: Any = None) -> MoveTask:
    """Validate as StartMessageMoveTask does, register the task and start its thread."""
    rate = check_rate(rate)
    source = _queue(backend, source_arn, "SourceArn")
    destination = _queue(backend, destination_arn, "DestinationArn") if destination_arn is not None else None
    if not dead_letter_sources(backend, source):
        raise invalid("Source queue must be configured as a Dead Letter Queue.")
    if destination is not None and destination.fifo_queue != source.fifo_queue:
        raise invalid(
            "The destination queue must be of the same type (standard or FIFO) as the source queue."
        )
    task = MoveTask(
        source.queue_arn, destination.queue_arn if destination else None, rate, visible_ids(source)
    )
    registry(backend.account_id, backend.region_name).add(task)
    threading.Thread(
        target=_run, args=(backend, task), name=f"sqs-move-task-{task.task_id[:8]}", daemon=True
    ).start()
    log.info(
        "move task %s: %d message(s) from %s to %s at %s/s",
        task.task_id,
        task.to_move,
        task.source_arn,
        task.destination_arn or "their source queues",
        task.rate or f"up to {MAX_RATE}",
    )
    return task


def list_tasks(backend: Any, source_arn: Any, max_results: Any = None) -> list[dict[str, Any]]:
    limit = check_max_results(max_results)
    source = _queue(backend, source_arn, "SourceArn")
    return [
        task.entry() for task in registry(backend.account_id, backend.region_name).of(source.queue_arn, limit)
    ]


def cancel(backend: Any, handle: Any) -> int:
    task_id, _ = decode_handle(handle)
    return registry(backend.account_id, backend.region_name).find(task_id).cancel()


class _TaskView(threading.local):
    """What the current thread's receive may see of one queue: None for every thread but a
    task's, while it takes messages."""

    def __init__(self) -> None:
        self.queue: Any = None
        self.members: set[str] = set()


_view = _TaskView()


class _Failed(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def _run(backend: Any, task: MoveTask) -> None:
    try:
        _move_all(backend, task)
    except _Failed as failure:
        log.warning("move task %s failed: %s", task.task_id, failure.reason)
        task.finish(FAILED, failure.reason)
    except Exception as error:  # the task fails; the emulator goes on
        log.exception("move task %s failed", task.task_id)
        task.finish(FAILED, getattr(error, "code", None) or type(error).__name__)
    else:
        log.info("move task %s: %s, %d moved", task.task_id, task.status, task.moved)


def _move_all(backend: Any, task: MoveTask) -> None:
    from moto.sqs.exceptions import QueueDoesNotExist

    began = time.monotonic()
    source_name = parse_queue_arn(task.source_arn).name  # type: ignore[union-attr]
    while not task.cancel_requested.is_set():
        allowed = allowed_by(time.monotonic() - began, task.pace) - task.moved
        if allowed <= 0:
            if not _any_visible(backend, source_name, task):
                break  # nothing left to wait for
            task.cancel_requested.wait(max(0.0, due_at(task.moved, task.pace) - (time.monotonic() - began)))
            continue
        try:
            taken = _take(backend, source_name, task, min(BATCH, allowed))
        except QueueDoesNotExist:
            raise _Failed(NO_QUEUE) from None
        if not taken:
            break  # none of the task's messages is visible: done
        for index, message in enumerate(taken):
            if task.cancel_requested.is_set():
                _release(backend, source_name, taken[index:])
                break
            try:
                _move(backend, source_name, task, message)
            except _Failed:
                _release(backend, source_name, taken[index:])
                raise
            task.members.discard(message.id)
            task.moved += 1
    task.finish(CANCELLED if task.cancel_requested.is_set() else COMPLETED)


def _any_visible(backend: Any, source_name: str, task: MoveTask) -> bool:
    """Whether one of the task's messages could be taken now."""
    queue = backend.queues.get(source_name)
    return queue is not None and not visible_ids(queue).isdisjoint(task.members)


def visible_ids(queue: Any) -> set[str]:
    """Ids of the queue's visible, undelayed messages (what ApproximateNumberOfMessages counts),
    read from a copy of its list: other threads change it meanwhile."""
    return {message.id for message in list(queue._messages) if message.visible and not message.delayed}


def _take(backend: Any, source_name: str, task: MoveTask, count: int) -> list[Any]:
    """Receive up to `count` of the task's messages, oldest first (copies with every attribute),
    invisible to consumers for CLAIM_SECONDS."""
    _view.queue, _view.members = backend.get_queue(source_name), task.members
    try:
        taken: list[Any] = backend.receive_message(source_name, count, 0, CLAIM_SECONDS, ["All"])
        return taken
    finally:
        _view.queue, _view.members = None, set()


def _release(backend: Any, source_name: str, messages: list[Any]) -> None:
    """Messages taken but not moved become visible in the DLQ again."""
    for message in messages:
        try:
            backend.change_message_visibility(source_name, message.receipt_handle, 0)
        except Exception:  # the DLQ may be gone; the message then is too
            log.debug("could not release %s", message.id, exc_info=True)


def _move(backend: Any, source_name: str, task: MoveTask, message: Any) -> None:
    """A new message in the destination (new id, timestamps, receive count), then the old one
    deleted from the DLQ."""
    from moto.sqs.exceptions import SQSException

    destination_arn = task.destination_arn or dead_letters.source_of(message)
    if destination_arn is None:
        raise _Failed(NO_SOURCE)
    ref = parse_queue_arn(destination_arn)
    destination = backend.queues.get(ref.name) if ref else None
    if destination is None:
        raise _Failed(NO_QUEUE)
    fifo = destination.fifo_queue
    try:
        backend.send_message(
            destination.name,
            message.body,
            message_attributes=dict(message.message_attributes),
            group_id=message.group_id if fifo else None,
            deduplication_id=message.id if fifo else None,  # the moved message's id: never a false duplicate
            system_attributes=dict(message.system_attributes or {}),
        )
        backend.delete_message(source_name, message.receipt_handle)
    except SQSException as error:
        raise _Failed(error.code) from None


# --- the moto patches --------------------------------------------------------------------------


def _patch_redrive_source() -> None:
    """Write on each message the queue whose redrive moved it, and when. moto's receive-time
    redrive is the only place one Message object is added to a second queue (SendMessage makes a
    new one)."""
    from moto.sqs.models import Queue

    add_message = Queue.add_message

    def add_message_noting_source(self: Any, message: Any) -> None:
        held_by = getattr(message, _HOLDER_ATTRIBUTE, None)
        if held_by is not None and held_by != self.queue_arn:
            dead_letters.note(message, held_by, moved_at_ms=time.time() * 1000)
        setattr(message, _HOLDER_ATTRIBUTE, self.queue_arn)
        add_message(self, message)

    install(Queue, "add_message", add_message_noting_source)


def _patch_task_view() -> None:
    """moto's receive walks `Queue.messages` (visible, not delayed) in queue order. A task's own
    receive sees only the messages it still has to move, oldest first. The clock is read once
    per call: moto read it twice per message, 96 % of a receive's time on a queue of 10,000."""
    from moto.core.utils import unix_time_millis
    from moto.sqs.models import Queue

    def visible(queue: Any) -> list[Any]:
        now = unix_time_millis()
        return [
            message
            for message in queue._messages
            if now > message.visible_at and now >= message.delayed_until
        ]

    def messages(self: Any) -> list[Any]:
        found = visible(self)
        held = fifo.hidden()
        if held:  # a FIFO receive: a group's messages from its first one in flight on (fifo.py)
            found = [message for message in found if message not in held]
        if _view.queue is not self:
            return found
        return oldest_first(message for message in found if message.id in _view.members)

    Queue.messages = property(messages)  # type: ignore[assignment]  # moto's is a property too, typed as its getter


def _authorized_also(response: Any, checks: Iterable[tuple[str, str]]) -> None:
    """Authorize the caller for each (SQS action, queue ARN) as if it had called that action."""
    for action, arn in checks:
        response._get_action = lambda action=action: action
        try:
            response._authenticate_and_authorize_normal_action(arn)
        finally:
            del response._get_action


def _patch_responses() -> None:
    from moto.core.responses import ActionResult
    from moto.sqs.exceptions import SQSException
    from moto.sqs.responses import SQSResponse

    def answering(operation: Callable[[Any], dict[str, Any]]) -> Callable[[Any], Any]:
        def method(self: Any) -> Any:
            try:
                return ActionResult(operation(self))
            except MoveTaskError as error:
                raise SQSException(error.code, error.message) from None

        method.__name__ = operation.__name__
        return method

    def start_message_move_task(self: Any) -> dict[str, Any]:
        backend = self.sqs_backend
        source_arn, destination_arn = self._get_param("SourceArn"), self._get_param("DestinationArn")
        _authorized_also(self, redrive_permissions(backend, source_arn, destination_arn))
        task = start(backend, source_arn, destination_arn, self._get_param("MaxNumberOfMessagesPerSecond"))
        return {"TaskHandle": task.handle}

    def list_message_move_tasks(self: Any) -> dict[str, Any]:
        return {
            "Results": list_tasks(
                self.sqs_backend, self._get_param("SourceArn"), self._get_param("MaxResults")
            )
        }

    def cancel_message_move_task(self: Any) -> dict[str, Any]:
        moved = cancel(self.sqs_backend, self._get_param("TaskHandle"))
        return {"ApproximateNumberOfMessagesMoved": moved}

    determine_resource = SQSResponse._determine_resource

    def _determine_resource(self: Any) -> str:
        # moto derives an SQS request's resource from QueueUrl; these name their queue by ARN.
        action = self._get_action()
        if action not in ACTIONS:
            return determine_resource(self)
        if action == "CancelMessageMoveTask":
            try:
                return decode_handle(self._get_param("TaskHandle"))[1]
            except MoveTaskError:
                return "*"  # a handle naming no queue: only a policy on every queue allows it
        arn = self._get_param("SourceArn")
        return arn if parse_queue_arn(arn) else "*"

    for operation in (start_message_move_task, list_message_move_tasks, cancel_message_move_task):
        setattr(SQSResponse, operation.__name__, answering(operation))
    install(SQSResponse, "_determine_resource", _determine_resource)


@declare(
    "sqs.move-tasks",
    "StartMessageMoveTask, ListMessageMoveTasks, CancelMessageMoveTask (DLQ redrive)",
    T("moto.sqs.models:Queue.add_message", "self", "message"),
    T("moto.sqs.models:Queue.messages", "self"),
    T("moto.sqs.responses:SQSResponse._determine_resource", "self"),
    T("moto.sqs.responses:SQSResponse.start_message_move_task", adds=True),
    T("moto.sqs.responses:SQSResponse.list_message_move_tasks", adds=True),
    T("moto.sqs.responses:SQSResponse.cancel_message_move_task", adds=True),
    QUEUE_MESSAGES,
    # a move is authorized as the two calls it stands for (`_authorized_also`)
    GET_ACTION,
    reads("moto.sqs.responses:SQSResponse._authenticate_and_authorize_normal_action", "self", "resource"),
    fixes_moto="SQS has no message move tasks",
)
def patch_move_tasks() -> None:
    """Add the three operations to moto's SQS (call once, before the server listens)."""
    _patch_redrive_source()
    _patch_task_view()
    _patch_responses()
