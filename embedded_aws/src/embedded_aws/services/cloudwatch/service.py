"""CloudWatch for the embedded AWS: what moto stores but never does, so alarms fire on a laptop.

- Alarms are evaluated (evaluator.py, alarm_rules.py) and change state as on AWS, with history
  (DescribeAlarmHistory) and SNS notifications (alarm_state.py, alarm_messages.py, history.py).
- Metrics: EMF log events become metric data (emf.py); GetMetricData reads one metric's points
  instead of scanning them all per period (metric_queries.py); AWS/SQS for every queue (sqs_metrics.py),
  AWS/Lambda for the local Lambda host (lambda_metrics.py), AWS/DynamoDB throttling for faults
  injected by embedded_aws/faults.py (dynamodb_metrics.py).
- CloudFormation types moto skips: alarms, query definitions (with their Logs APIs), metric
  filters, SNS subscriptions and topic policies (resource_types.py, query_definitions.py).
- One time scale (clock.py, LOCAL_CLOUDWATCH_SPEEDUP): periods are evaluated faster than real.

The moto patches that wire it in are declared in compat/patches.py (applied by `EmbeddedAWS.start`
before the server listens); `start()`/`stop()` run the background thread.
"""

from __future__ import annotations

import logging
import threading
import time

from embedded_aws.services.awslambda.metrics import LAMBDA_METRICS
from embedded_aws.services.cloudwatch.alarm_state import AlarmStates
from embedded_aws.services.cloudwatch.clock import Clock, bucket_end
from embedded_aws.services.cloudwatch.evaluator import AlarmEvaluator
from embedded_aws.services.cloudwatch.history import AlarmHistory
from embedded_aws.services.sqs.metrics import SqsMetrics

log = logging.getLogger("embedded_aws.cloudwatch")

TICK_SECONDS = 0.1
PRUNE_EVERY_SECONDS = 60


class LocalCloudWatch:
    def __init__(self, clock: Clock | None = None) -> None:
        self.clock = clock or Clock.from_env()
        self.history = AlarmHistory()
        self.states = AlarmStates(self.history)
        self.evaluator = AlarmEvaluator(self.clock, self.states)
        self.sqs = SqsMetrics()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="local-cloudwatch", daemon=True)
        self._thread.start()
        log.info(
            "CloudWatch: alarms evaluated and metrics published %gx faster than real time", self.clock.speedup
        )

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _run(self) -> None:
        minute = self.clock.metric_minute
        # Service metrics are sampled in the middle of each (scaled) minute: a sample never
        # races the evaluation of the period it belongs to.
        next_sample = bucket_end(time.time(), minute) + minute / 2
        next_prune = time.time() + PRUNE_EVERY_SECONDS
        while not self._stop.wait(TICK_SECONDS):
            now = time.time()
            try:
                if now >= next_sample:
                    self.sqs.sample(now)
                    closed = bucket_end(now, minute)
                    LAMBDA_METRICS.flush(closed - minute, closed)
                    next_sample = closed + minute + minute / 2
                if now >= next_prune:
                    for backend in self.evaluator.backends():
                        self.evaluator.index(backend).prune(now)
                    next_prune = now + PRUNE_EVERY_SECONDS
                self.evaluator.tick(now)
            except Exception:  # the thread outlives one bad round
                log.exception("CloudWatch round failed")
