"""The local time scale: CloudWatch's minutes pass `speedup` times faster on a laptop.

Only the cadence is scaled: an alarm's Period is evaluated as Period / speedup seconds of wall
time, and service metrics are published every 60 / speedup seconds. Timestamps and values stay
real (a datapoint is stamped when it happened; an age is measured in real seconds).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass

SPEEDUP_ENV = "LOCAL_CLOUDWATCH_SPEEDUP"
DEFAULT_SPEEDUP = 12.0  # a 60 s period is 5 s of wall time
METRIC_MINUTE = 60  # SQS and Lambda publish one datapoint per minute


@dataclass(frozen=True)
class Clock:
    speedup: float = DEFAULT_SPEEDUP

    @classmethod
    def from_env(cls) -> Clock:
        raw = os.environ.get(SPEEDUP_ENV, "")
        try:
            speedup = float(raw) if raw else DEFAULT_SPEEDUP
        except ValueError:
            raise ValueError(f"{SPEEDUP_ENV} must be a number, got {raw!r}") from None
        if not math.isfinite(speedup) or speedup <= 0:
            raise ValueError(f"{SPEEDUP_ENV} must be > 0, got {raw!r}")
        return cls(speedup)

    def wall(self, aws_seconds: float) -> float:
        """How long `aws_seconds` of CloudWatch time lasts locally."""
        return aws_seconds / self.speedup

    @property
    def metric_minute(self) -> float:
        return self.wall(METRIC_MINUTE)


def bucket_end(now: float, width: float) -> float:
    """The end of the last bucket of `width` seconds (aligned to the epoch) closed by `now`."""
    return math.floor(now / width) * width
