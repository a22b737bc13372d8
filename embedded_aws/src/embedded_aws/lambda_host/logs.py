"""The local Lambda host's log writer (lambda_host/host.py): START / output / END / REPORT
events to the function's log group, one stream per sandbox, written with the function role's
credentials. An Invoke API call has its events written before it returns; a mapping's
invocations queue theirs, and the writer thread writes all that is queued in one PutLogEvents
per stream and only then deletes the messages of those invocations (DeleteMessageBatch, with
the role's credentials).
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable
from typing import Any, Protocol

from embedded_aws.credentials import Credentials
from embedded_aws.lambda_host.sandbox import FunctionSpec
from embedded_aws.profiling import timer

WRITER_THREADS = 4  # requests of one log-writer round in flight at once
MAX_PENDING_ACKS = 50  # receipt handles queued for deletion before pollers wait

log = logging.getLogger("embedded_aws.lambda_host")


class ClientSource(Protocol):
    """What the log writer uses of the LambdaHost that owns it: its clients and role credentials."""

    def client(self, service: str, credentials: Credentials) -> Any: ...

    def credentials(self, role_arn: str) -> Credentials: ...


class LogWriter:
    """Writes queued log events, then queued SQS acknowledgements, in a background thread.

    Each round takes everything queued so far: one CreateLogStream for a new stream and one
    PutLogEvents per stream (however many invocations it holds), then DeleteMessageBatch
    calls of up to ten receipt handles per queue and client. While a round runs, the next one
    fills up, so rounds grow with the load instead of costing a request per invocation. An
    acknowledgement is only ever sent after the logs queued before it, so once a message is
    deleted the log lines of the invocation that handled it are readable, as before.
    """

    MAX_EVENTS = 10_000  # PutLogEvents limits: 10,000 events, 1,048,576 bytes (+26 per event)
    MAX_BYTES = 1_000_000

    def __init__(self, host: ClientSource) -> None:
        self.host = host
        self._cond = threading.Condition()
        # (role, function, group, stream) -> events
        self._events: dict[tuple[str, str, str, str], list[dict[str, Any]]] = {}
        self._acks: list[tuple[Any, str, list[str]]] = []
        self._created: set[tuple[str, str]] = set()
        self._round = threading.Lock()  # one writer at a time keeps each stream in order
        self._thread: threading.Thread | None = None
        self._pool: Any = None
        self._pending_handles = 0
        self._stopped = False

    def add(
        self, spec: FunctionSpec, stream: str, events: list[dict[str, Any]], *, wake: bool = True
    ) -> None:
        """Queue events for a stream; `wake=False` when the caller flushes itself right after."""
        with self._cond:
            self._events.setdefault((spec.role_arn, spec.name, spec.log_group, stream), []).extend(events)
            if wake:
                self._wake()

    def _wake(self) -> None:
        """Under self._cond: start the writer thread if needed and let it run a round."""
        if self._thread is None and not self._stopped:
            self._thread = threading.Thread(target=self._loop, name="log-writer", daemon=True)
            self._thread.start()
        self._cond.notify_all()

    def ack(self, sqs: Any, queue_url: str, receipt_handles: list[str]) -> None:
        """Queue a delete; a poller waits here while MAX_PENDING_ACKS handles are queued, so
        deletes never fall far behind (messages would pile up in flight)."""
        with self._cond:
            while self._pending_handles >= MAX_PENDING_ACKS and not self._stopped:
                self._cond.wait(1)
            self._pending_handles += len(receipt_handles)
            self._acks.append((sqs, queue_url, receipt_handles))
            self._wake()

    def flush(self) -> None:
        """Write everything queued now, from the calling thread."""
        with self._round:
            with self._cond:
                events, acks = self._events, self._acks
                self._events, self._acks = {}, []
            self._write(events, acks)

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify()
        if self._thread is not None:
            self._thread.join(timeout=10)
        self.flush()
        if self._pool is not None:
            self._pool.shutdown(wait=False)

    def _loop(self) -> None:
        while True:
            with self._cond:
                while not (self._events or self._acks) and not self._stopped:
                    self._cond.wait()
                if self._stopped:
                    return
            try:
                self.flush()
            except Exception as error:  # noqa: BLE001 - the writer must outlive a bad round
                log.warning("log writer: %s", error)

    def _write(
        self,
        events: dict[tuple[str, str, str, str], list[dict[str, Any]]],
        acks: list[tuple[Any, str, list[str]]],
    ) -> None:
        """All log streams of the round (in parallel), then all its deletes (in parallel)."""
        self._parallel([functools.partial(self._put_logs, *key, batch) for key, batch in events.items()])
        grouped: dict[tuple[int, str], tuple[Any, list[str]]] = {}
        for sqs, queue_url, handles in acks:
            grouped.setdefault((id(sqs), queue_url), (sqs, []))[1].extend(handles)
        self._parallel(
            [
                functools.partial(self._delete, sqs, queue_url, handles[start : start + 10])
                for (_, queue_url), (sqs, handles) in grouped.items()
                for start in range(0, len(handles), 10)
            ]
        )
        with self._cond:
            self._pending_handles -= sum(len(handles) for _, _, handles in acks)
            self._cond.notify_all()

    def _parallel(self, calls: list[Callable[[], None]]) -> None:
        if len(calls) <= 1:
            for call in calls:
                call()
            return
        if self._pool is None:
            from concurrent.futures import ThreadPoolExecutor

            self._pool = ThreadPoolExecutor(max_workers=WRITER_THREADS, thread_name_prefix="log-writer")
        for future in [self._pool.submit(call) for call in calls]:
            future.result()

    def _put_logs(
        self, role_arn: str, name: str, group: str, stream: str, batch: list[dict[str, Any]]
    ) -> None:
        from botocore.exceptions import ClientError

        host = self.host
        with timer("writer put logs"):
            logs = host.client("logs", host.credentials(role_arn))
            try:
                if (group, stream) not in self._created:
                    logs.create_log_stream(logGroupName=group, logStreamName=stream)
                    self._created.add((group, stream))
                for chunk in self._chunks(batch):
                    logs.put_log_events(logGroupName=group, logStreamName=stream, logEvents=chunk)
            except ClientError as error:
                log.warning("logs of %s not written to %s: %s", name, group, error)

    @staticmethod
    def _delete(sqs: Any, queue_url: str, handles: list[str]) -> None:
        entries = [{"Id": str(n), "ReceiptHandle": handle} for n, handle in enumerate(handles)]
        try:
            with timer("writer delete"):
                failed = sqs.delete_message_batch(QueueUrl=queue_url, Entries=entries).get("Failed")
            if failed:
                log.warning("deleting from %s: %s", queue_url, failed[0])
        except Exception as error:  # noqa: BLE001 - left in flight, as after a failed delete
            log.warning("deleting from %s failed: %s", queue_url, error)

    @classmethod
    def _chunks(cls, events: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
        chunks: list[list[dict[str, Any]]] = [[]]
        size = 0
        for event in events:
            cost = len(event["message"].encode()) + 26
            if chunks[-1] and (len(chunks[-1]) >= cls.MAX_EVENTS or size + cost > cls.MAX_BYTES):
                chunks.append([])
                size = 0
            chunks[-1].append(event)
            size += cost
        return chunks
