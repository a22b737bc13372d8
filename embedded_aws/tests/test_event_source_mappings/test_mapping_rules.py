"""The settings CreateEventSourceMapping and UpdateEventSourceMapping refuse for an SQS source
(services/awslambda/mappings.py), checked without moto."""

from __future__ import annotations

import json

import pytest

from embedded_aws.services.awslambda.mappings import INVALID_FILTER, settings_refusal, visibility_refusal

QUEUE = "arn:aws:sqs:us-east-1:000000000000:jobs"
FIFO = "arn:aws:sqs:us-east-1:000000000000:jobs.fifo"


def test_settings_aws_takes_are_not_refused():
    """Defaults, a large batch with a window, and a valid filter pass."""
    assert settings_refusal({}, QUEUE) is None
    assert settings_refusal({"BatchSize": 100, "MaximumBatchingWindowInSeconds": 1}, QUEUE) is None
    pattern = {"Filters": [{"Pattern": '{"body": {"kind": ["order"]}}'}]}
    assert settings_refusal({"FilterCriteria": pattern}, QUEUE) is None


def test_a_source_that_is_not_sqs_is_not_checked_here():
    """The rules are SQS's: another source's settings are left to moto."""
    assert settings_refusal({"BatchSize": 1000}, "arn:aws:kinesis:us-east-1:0:stream/s") is None


@pytest.mark.parametrize("window", [-1, 301])
def test_a_window_outside_0_to_300_seconds_is_refused(window):
    """MaximumBatchingWindowInSeconds is 0-300."""
    assert settings_refusal({"MaximumBatchingWindowInSeconds": window}, QUEUE) == (
        "MaximumBatchingWindowInSeconds must be between 0 and 300"
    )


def test_a_window_on_a_fifo_queue_is_refused():
    """FIFO queues take no batching window."""
    assert settings_refusal({"MaximumBatchingWindowInSeconds": 5}, FIFO) == (
        "Batching window is not supported for FIFO queues"
    )


@pytest.mark.parametrize("window", [None, 0])
def test_a_batch_over_10_needs_a_window(window):
    """BatchSize above 10 needs a window of at least 1 s."""
    assert settings_refusal({"BatchSize": 11, "MaximumBatchingWindowInSeconds": window}, QUEUE) == (
        "Maximum batch window in seconds must be greater than 0 if maximum batch size is greater than 10"
    )


def test_a_pattern_that_is_not_json_gets_awss_one_message():
    """Any pattern AWS refuses reads "Invalid filter pattern definition."."""
    criteria = {"Filters": [{"Pattern": "{not json"}]}
    assert settings_refusal({"FilterCriteria": criteria}, QUEUE) == INVALID_FILTER


def test_more_than_five_filters_say_so():
    """The filter quota (five per mapping) has its own message, not the generic one."""
    criteria = {"Filters": [{"Pattern": json.dumps({"body": {"n": [n]}})} for n in range(6)]}
    refusal = settings_refusal({"FilterCriteria": criteria}, QUEUE)
    assert refusal is not None
    assert refusal != INVALID_FILTER


def test_a_visibility_timeout_shorter_than_the_functions_timeout_is_refused():
    """The queue must hide a message at least as long as the function may run."""
    assert visibility_refusal(30, 60) == (
        "Queue visibility timeout: 30 seconds is less than Function timeout: 60 seconds"
    )
    assert visibility_refusal(60, 60) is None
