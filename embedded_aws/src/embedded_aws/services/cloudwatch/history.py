"""Alarm history, and the DescribeAlarmHistory API moto lacks.

Items are kept per account and region for two weeks, also after the alarm is deleted, as on AWS.
"""

from __future__ import annotations

import threading
from datetime import datetime, timedelta
from typing import Any

from embedded_aws.compat.registry import T, declare
from embedded_aws.services.cloudwatch.metrics import naive_utc

RETENTION = timedelta(days=14)
MAX_RECORDS = 100


class AlarmHistory:
    def __init__(self) -> None:
        self._items: dict[tuple[str, str], list[dict[str, Any]]] = {}
        self._lock = threading.Lock()

    def add(self, account_id: str, region: str, item: dict[str, Any]) -> None:
        with self._lock:
            items = self._items.setdefault((account_id, region), [])
            items.append(item)
            cutoff = item["Timestamp"] - RETENTION
            while items and items[0]["Timestamp"] < cutoff:
                items.pop(0)

    def query(
        self,
        account_id: str,
        region: str,
        *,
        alarm_name: str | None = None,
        alarm_types: list[str] | None = None,
        item_type: str | None = None,
        start: datetime | None = None,
        end: datetime | None = None,
        newest_first: bool = True,
    ) -> list[dict[str, Any]]:
        types = alarm_types or ["MetricAlarm"]
        with self._lock:
            items = list(self._items.get((account_id, region), ()))
        found = [
            i
            for i in items
            if (alarm_name is None or i["AlarmName"] == alarm_name)
            and i["AlarmType"] in types
            and (item_type is None or i["HistoryItemType"] == item_type)
            and (start is None or i["Timestamp"] >= _naive(start))
            and (end is None or i["Timestamp"] <= _naive(end))
        ]
        return found[::-1] if newest_first else found


def _naive(moment: datetime) -> datetime:
    return naive_utc(moment.timestamp()) if moment.tzinfo else moment


@declare(
    "cloudwatch.alarm-history",
    "DescribeAlarmHistory from the alarms' recorded history",
    T("moto.cloudwatch.responses:CloudWatchResponse.describe_alarm_history", adds=True),
    fixes_moto="CloudWatch has no DescribeAlarmHistory",
    uses=("cloudwatch.history",),
)
def patch_alarm_history(history: AlarmHistory) -> None:
    """DescribeAlarmHistory on moto's CloudWatch API: AlarmName, AlarmTypes, HistoryItemType,
    StartDate/EndDate, ScanBy, MaxRecords and NextToken."""
    from moto.cloudwatch.exceptions import InvalidParameterValue
    from moto.cloudwatch.responses import CloudWatchResponse
    from moto.core.responses import ActionResult

    def describe_alarm_history(self: Any) -> ActionResult:
        max_records = int(self._get_param("MaxRecords") or MAX_RECORDS)
        if not 1 <= max_records <= MAX_RECORDS:
            raise InvalidParameterValue(f"The value {max_records} for parameter MaxRecords is not valid.")
        token = self._get_param("NextToken")
        try:
            offset = int(token) if token else 0
        except ValueError:
            raise InvalidParameterValue("The value for parameter NextToken is not valid.") from None
        items = history.query(
            self.current_account,
            self.region,
            alarm_name=self._get_param("AlarmName"),
            alarm_types=self._get_param("AlarmTypes"),
            item_type=self._get_param("HistoryItemType"),
            start=self._get_param("StartDate"),
            end=self._get_param("EndDate"),
            newest_first=(self._get_param("ScanBy") or "TimestampDescending") == "TimestampDescending",
        )
        page = items[offset : offset + max_records]
        more = offset + max_records < len(items)
        return ActionResult(
            {"AlarmHistoryItems": page, "NextToken": str(offset + max_records) if more else None}
        )

    CloudWatchResponse.describe_alarm_history = describe_alarm_history  # type: ignore[attr-defined]  # an action moto lacks
