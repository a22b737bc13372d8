"""SQS event source mappings of the local Lambda host (lambda_host/host.py), polled as the
Lambda service polls them: pollers per enabled mapping, scaled like the Lambda service
(scaling.py): five at first, more while batches come back full, fewer when receives
come back empty, never more than MaximumConcurrency, reserved concurrency or the local cap. Each
gathers a batch (BatchSize, MaximumBatchingWindowInSeconds) with the role's credentials, drops
what matches no filter (FilterCriteria, filters.py), invokes the function (in the
emulator's process directly, as the Lambda service does; no Invoke API call), has successes
deleted, honours batchItemFailures (ReportBatchItemFailures), and leaves failed messages for the
visibility timeout so the queue's redrive policy moves poison messages to the dead-letter queue.
A throttled batch (reserved concurrency in use) is retried until its visibility timeout runs out.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from dataclasses import dataclass
from typing import Any, Protocol

from embedded_aws.credentials import Credentials
from embedded_aws.lambda_host.event_source_mappings import filters as event_filter
from embedded_aws.lambda_host.event_source_mappings.records import acknowledged_ids, sqs_record
from embedded_aws.lambda_host.event_source_mappings.scaling import Scaling, concurrency_limit
from embedded_aws.lambda_host.sandbox import FunctionSpec, InvocationResult, Throttled
from embedded_aws.profiling import count, timer

MAPPING_REFRESH_SECONDS = 0.5
# A poller's long poll. The Lambda service waits up to 20 s; an idle poller then costs one
# request per wait. 5 s keeps idle mappings cheap and a disabled or deleted mapping stops
# polling within seconds (checked between receives).
POLL_WAIT_SECONDS = 5
MAX_RESPONSE_BYTES = 6_291_556  # synchronous invocation response limit
# A batch stops gathering (batching window, batch size > 10) once one more receive of ten
# messages of SQS's maximum size (256 KiB) could take it past the 6 MB invocation payload.
BATCH_GATHER_BYTES = MAX_RESPONSE_BYTES - 10 * 262_144
THROTTLE_RETRY_SECONDS = (0.1, 2.0)  # a throttled batch is retried with backoff, first and longest wait

log = logging.getLogger("embedded_aws.lambda_host")


@dataclass(frozen=True)
class MappedFunction:
    """What a poller needs of its mapping's function, read again before every batch: a new role
    or reserved concurrency takes effect at the next batch."""

    role_arn: str
    reserved_concurrency: int | None
    timeout: int


def reserved_concurrency_of(fn: Any) -> int | None:
    """moto's stored ReservedConcurrentExecutions (None when not set)."""
    value = getattr(fn, "reserved_concurrency", None)
    return None if value is None or value == "" else int(value)


def function_not_found(error: BaseException) -> bool:
    """The function an ARN names does not exist (moto's 404, or the Lambda API's answer)."""
    code = getattr(error, "code", None)
    if code == 404:
        return True
    response = getattr(error, "response", None)
    return isinstance(response, dict) and response.get("Error", {}).get("Code") == "ResourceNotFoundException"


class PollerHost(Protocol):
    """What a poller uses of the LambdaHost that runs it (lambda_host/host.py)."""

    endpoint: str

    @property
    def stopping(self) -> bool: ...

    def stored_function(self, function_arn: str) -> Any: ...

    def client(self, service: str, credentials: Credentials) -> Any: ...

    def credentials(self, role_arn: str) -> Credentials: ...

    def spec_from_moto(self, fn: Any) -> FunctionSpec: ...

    def invoke(
        self,
        spec: FunctionSpec,
        event: Any,
        *,
        defer_logs: bool = False,
        reserved_concurrency: int | None = None,
    ) -> InvocationResult: ...

    def acknowledge(self, sqs: Any, queue_url: str, receipt_handles: list[str]) -> None: ...


class MappingPoller:
    """Polls one SQS event source mapping until it is disabled or deleted, or its function is.

    Like the Lambda service, several batches are in flight at once, one per poller thread,
    scaled by scaling.py from what the receives return and within the mapping's
    MaximumConcurrency and the function's reserved concurrency. Everything is read live: the
    supervisor hands the poller the mapping's current settings every MAPPING_REFRESH_SECONDS,
    and the function (role, reserved concurrency, code) is read before every batch.
    """

    VISIBILITY_REFRESH_SECONDS = 30

    def __init__(self, host: PollerHost, mapping: dict[str, Any]) -> None:
        self.host = host
        self.mapping = mapping
        self.scaling = Scaling()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self._threads_lock = threading.Lock()
        self._serial = 0
        self._live = 0  # poller threads running
        self._filters: tuple[str, list[dict[str, Any]]] | None = None  # (FilterCriteria as JSON, patterns)
        self._visibility: tuple[float, float] | None = None  # (read at, queue visibility timeout)

    @property
    def alive(self) -> bool:
        return any(thread.is_alive() for thread in self._threads)

    def start(self) -> None:
        log.info(
            "mapping %s: polling %s for %s",
            self.mapping["UUID"],
            self.mapping["EventSourceArn"],
            self.mapping["FunctionArn"],
        )
        self._grow()

    def update(self, mapping: dict[str, Any]) -> None:
        """The mapping's current settings; a raised limit starts pollers up to its floor."""
        self.mapping = mapping
        self._grow()

    def stop(self) -> None:
        """No new receive starts; a batch already received is finished."""
        self._stop.set()

    def _stopped(self) -> bool:
        return self._stop.is_set() or self.host.stopping

    def _limit(self, function: MappedFunction | None) -> int:
        maximum = (self.mapping.get("ScalingConfig") or {}).get("MaximumConcurrency")
        return concurrency_limit(maximum, function.reserved_concurrency if function else None)

    def _grow(self) -> None:
        try:
            function = self._function()
        except Exception:  # noqa: BLE001 - the limit without the function's part
            function = None
        for _ in range(self.scaling.start(self._limit(function))):
            self._spawn()

    def _spawn(self) -> None:
        with self._threads_lock:
            self._serial += 1
            thread = threading.Thread(
                target=self._run, name=f"poller-{self.mapping['UUID'][:8]}-{self._serial}", daemon=True
            )
            self._threads = [t for t in self._threads if t.is_alive()] + [thread]
            self._live += 1
        thread.start()

    def _run(self) -> None:
        retired = False
        try:
            while not self._stopped():
                try:
                    retired = self._poll_once()
                except Exception as error:  # noqa: BLE001 - keep polling, as the service does
                    log.warning("mapping %s: %s", self.mapping["UUID"], error)
                    self._stop.wait(1)
                if retired:
                    return
        finally:
            if not retired:
                self.scaling.stopped()
            with self._threads_lock:
                self._live -= 1
                last = self._live == 0 and self._stop.is_set()
            if last:  # what tests and operators wait for: nothing of this mapping receives any more
                log.info("mapping %s: stopped polling", self.mapping["UUID"])

    def _function(self) -> MappedFunction | None:
        """The mapping's function as it is now; None if it was deleted."""
        try:
            fn = self.host.stored_function(self.mapping["FunctionArn"])
        except Exception as error:
            if function_not_found(error):
                return None
            raise
        return MappedFunction(fn.role, reserved_concurrency_of(fn), int(fn.timeout))

    def _patterns(self, mapping: dict[str, Any]) -> list[dict[str, Any]]:
        """The mapping's filter patterns, compiled again whenever FilterCriteria changes."""
        criteria = mapping.get("FilterCriteria")
        key = json.dumps(criteria, sort_keys=True) if criteria else ""
        cached = self._filters
        if cached is None or cached[0] != key:
            cached = (key, event_filter.compile_filters(criteria))
            self._filters = cached
        return cached[1]

    def _poll_once(self) -> bool:
        """Gather one batch and process it; True if this poller retires (scaling back)."""
        host, mapping = self.host, self.mapping
        function = self._function()
        if function is None:  # deleted: the supervisor stops this mapping's pollers
            self._stop.wait(1)
            return False
        self._patterns(mapping)  # a FilterCriteria that cannot be evaluated: receive nothing
        sqs = host.client("sqs", host.credentials(function.role_arn))
        queue_arn = mapping["EventSourceArn"]
        _, _, _, region, account, queue_name = queue_arn.split(":")
        # Built from the ARN, as the service does: the role needs no sqs:GetQueueUrl.
        queue_url = f"{host.endpoint}/{account}/{queue_name}"
        batch_size = int(mapping.get("BatchSize") or 10)
        received, kept, first_at = self._gather(
            sqs, queue_url, queue_arn, region, mapping, function, batch_size
        )
        if not received:
            return self.scaling.retire(True, self._limit(function))
        if self.scaling.after_receive(received, batch_size, self._limit(function), time.monotonic()):
            self._spawn()
        if kept:
            self._process(sqs, queue_url, self.mapping, kept, first_at)
        return self.scaling.retire(False, self._limit(self._function() or function))

    def _gather(
        self,
        sqs: Any,
        queue_url: str,
        queue_arn: str,
        region: str,
        mapping: dict[str, Any],
        function: MappedFunction,
        batch_size: int,
    ) -> tuple[int, list[tuple[dict[str, Any], dict[str, Any]]], float]:
        """One batch: a long poll for the first messages, then, with a batching window, more
        receives until the batch is full, the window (counted from the first receive that
        returned messages) has passed or the payload nears 6 MB. A message that matches no
        filter (the mapping's filters when it is received) is deleted at once and does not count
        towards the batch. With a window, if window + function timeout exceed the queue's
        visibility timeout, messages are received with a visibility timeout of window + function
        timeout + 30 s, as the Lambda service does (with-sqs.html).
        Returns (messages received, [(message, record)] to invoke with, when the first came)."""
        window = int(mapping.get("MaximumBatchingWindowInSeconds") or 0)
        visibility: dict[str, int] = {}
        if window and window + function.timeout > self._visibility_timeout(sqs, queue_url):
            visibility["VisibilityTimeout"] = window + function.timeout + 30
        received, size = 0, 0
        kept: list[tuple[dict[str, Any], dict[str, Any]]] = []
        deadline: float | None = None
        first_at = time.monotonic()
        while True:
            if deadline is None:
                wait = POLL_WAIT_SECONDS
            else:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                wait = min(int(remaining), 20)  # whole seconds; under one second, short polls
            with timer("poller receive"):
                messages = sqs.receive_message(
                    QueueUrl=queue_url,
                    MaxNumberOfMessages=min(10, batch_size - len(kept)),
                    WaitTimeSeconds=wait,
                    AttributeNames=["All"],
                    MessageAttributeNames=["All"],
                    **visibility,
                ).get("Messages", [])
            if messages:  # LOCAL_PROFILE: the receives SQS bills as non-empty (bench/ops_cost_check.py)
                count("poller receive with messages")
            received += len(messages)
            patterns = self._patterns(self.mapping) if messages else []
            dropped = []
            for message in messages:
                record = sqs_record(message, queue_arn, region, batching_window=window > 0)
                if event_filter.record_matches(record, patterns):
                    kept.append((message, record))
                    size += len(message["Body"]) + 1024
                else:
                    dropped.append(message["ReceiptHandle"])
            if dropped:  # the Lambda service deletes what no filter matches, without invoking
                self.host.acknowledge(sqs, queue_url, dropped)
            if deadline is None:
                if not messages or window <= 0:
                    break
                first_at = time.monotonic()
                deadline = first_at + window
            if len(kept) >= batch_size or size >= BATCH_GATHER_BYTES or self._stopped():
                break
            if not messages and wait == 0:
                self._stop.wait(min(0.2, max(deadline - time.monotonic(), 0)))
        return received, kept, first_at

    def _process(
        self,
        sqs: Any,
        queue_url: str,
        mapping: dict[str, Any],
        kept: list[tuple[dict[str, Any], dict[str, Any]]],
        received_at: float,
    ) -> None:
        """Invoke with the batch and have what succeeded deleted (after its logs are written)."""
        event = {"Records": [record for _, record in kept]}
        with timer("poller invoke"):
            outcome = self._invoke_admitted(sqs, queue_url, mapping["FunctionArn"], event, received_at)
        if outcome is None:
            return  # throttled throughout: the messages come back after the visibility timeout
        function_error, payload = outcome
        ids = [message["MessageId"] for message, _ in kept]
        done = acknowledged_ids(
            ids,
            function_error,
            payload,
            "ReportBatchItemFailures" in (mapping.get("FunctionResponseTypes") or []),
        )
        handles = [message["ReceiptHandle"] for message, _ in kept if message["MessageId"] in done]
        if handles:
            # Deleted by the log writer once this invocation's logs are written.
            self.host.acknowledge(sqs, queue_url, handles)

    def _invoke_admitted(
        self, sqs: Any, queue_url: str, function_arn: str, event: dict[str, Any], received_at: float
    ) -> tuple[str | None, bytes] | None:
        """Invoke; while the function's reserved concurrency is in use (a throttle, recorded as
        one), back off and try again until the messages' visibility timeout would run out, then
        give up on the batch (services-sqs-errorhandling.html: throttled messages return to the
        queue, and the receive counts towards maxReceiveCount). None if it never ran."""
        delay, longest = THROTTLE_RETRY_SECONDS
        give_up_at: float | None = None
        while True:
            try:
                return self._invoke(function_arn, event)
            except Throttled:
                if give_up_at is None:
                    give_up_at = received_at + self._visibility_timeout(sqs, queue_url)
                if self._stopped() or time.monotonic() + delay >= give_up_at:
                    return None
                self._stop.wait(delay)
                delay = min(delay * 2, longest)

    def _visibility_timeout(self, sqs: Any, queue_url: str) -> float:
        """The queue's visibility timeout (sqs:GetQueueAttributes, which the Lambda service's
        role needs too); 0 (no retry) if it cannot be read."""
        now, cached = time.monotonic(), self._visibility
        if cached and now - cached[0] < self.VISIBILITY_REFRESH_SECONDS:
            return cached[1]
        try:
            seconds = float(
                sqs.get_queue_attributes(QueueUrl=queue_url, AttributeNames=["VisibilityTimeout"])[
                    "Attributes"
                ]["VisibilityTimeout"]
            )
        except Exception as error:  # noqa: BLE001 - no retry rather than no progress
            log.warning("mapping %s: visibility timeout unknown: %s", self.mapping["UUID"], error)
            seconds = 0.0
        self._visibility = (now, seconds)
        return seconds

    def _invoke(self, function_arn: str, event: dict[str, Any]) -> tuple[str | None, bytes]:
        """(FunctionError, payload) of a synchronous invocation; raises Throttled. The stored
        function runs directly, as the Lambda service invokes a mapping's function (no caller
        to authorize), with the code and configuration it has now."""
        host = self.host
        fn = host.stored_function(function_arn)
        result = host.invoke(
            host.spec_from_moto(fn), event, defer_logs=True, reserved_concurrency=reserved_concurrency_of(fn)
        )
        if len(result.payload) > MAX_RESPONSE_BYTES:
            return "Unhandled", json.dumps(
                {
                    "errorMessage": f"Response payload size exceeded maximum allowed payload size ({MAX_RESPONSE_BYTES} bytes).",
                    "errorType": "Function.ResponseSizeTooLarge",
                }
            ).encode()
        return result.function_error, result.payload
