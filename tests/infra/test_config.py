"""Context validation: bad values stop synth with one line naming the value; defaults agree
with the documented cdk.json context."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from stacks.config import (
    CONTEXT_DEFAULTS,
    DECISION_METRICS,
    METRICS_NAMESPACE,
    WORKER_METRICS_NAMESPACE_ENV,
    WORKER_TABLE_ENV,
    ConfigError,
    Names,
    StackConfig,
)
from tests.conftest import ROOT

ROOT = Path(__file__).resolve().parents[2]


def test_defaults_match_cdk_json_context():
    """cdk.json documents the same defaults the code falls back to."""
    context = json.loads((ROOT / "cdk.json").read_text())["context"]
    assert {key: context[key] for key in CONTEXT_DEFAULTS} == CONTEXT_DEFAULTS


def test_the_readme_table_is_rendered_from_the_declared_keys():
    """Each context key is declared once (stacks/config.py CONTEXT_KEYS): its default, its check,
    its table row and its Options value; docs/deploy.md's table is exactly the rendered one."""
    from stacks.config import CONTEXT_KEYS, StackConfig, context_table

    assert context_table() in (ROOT / "docs" / "deploy.md").read_text()
    assert list(StackConfig.from_context({}).options()) == [key.name for key in CONTEXT_KEYS]


def test_default_names_are_the_labs():
    """Every physical name derives from the prefix labex-q05."""
    names = StackConfig.from_context({}).names
    assert (
        names.jobs_queue,
        names.dead_letter_queue,
        names.orders_table,
        names.reference_table,
        names.worker_function,
        Names.log_group_of(names.worker_function),
    ) == (
        "labex-q05-jobs",
        "labex-q05-jobs-dlq",
        "labex-q05-orders",
        "labex-q05-reference",
        "labex-q05-worker",
        "/aws/lambda/labex-q05-worker",
    )


def test_string_context_values_are_parsed():
    """`-c batch_size=3` arrives as a string and is accepted."""
    config = StackConfig.from_context({"batch_size": "3", "removal": "destroy", "prefix": "team-a"})
    assert (config.batch_size, config.destroy_on_removal, config.names.jobs_queue) == (3, True, "team-a-jobs")


@pytest.mark.parametrize(
    "context,message",
    [
        ({"prefix": "Labex"}, "context prefix='Labex' is invalid"),
        ({"prefix": "a"}, "context prefix='a' is invalid"),
        ({"prefix": "bad--prefix"}, "context prefix='bad--prefix' is invalid"),
        ({"prefix": "trailing-"}, "context prefix='trailing-' is invalid"),
        ({"prefix": "x" * 41}, "is invalid"),
        ({"batch_size": 0}, "context batch_size=0 is invalid: use a whole number from 1 to 10"),
        ({"batch_size": 11}, "context batch_size=11 is invalid"),
        ({"batch_size": "ten"}, "context batch_size='ten' is invalid"),
        ({"batch_size": True}, "context batch_size=True is invalid"),
        ({"batch_size": 2.5}, "context batch_size=2.5 is invalid"),
        (
            {"visibility_timeout_seconds": 29},
            "visibility_timeout_seconds=29 is below 6 x function_timeout_seconds=5 (needs at least 30)",
        ),
        (
            {"function_timeout_seconds": 6},
            "visibility_timeout_seconds=30 is below 6 x function_timeout_seconds=6",
        ),
        (
            {"function_timeout_seconds": 1},
            "context function_timeout_seconds=1 is invalid: use a whole number from 2 to 900",
        ),
        (
            {"max_receive_count": 4},
            "context max_receive_count=4 is invalid: use a whole number from 5 to 1000",
        ),
        (
            {"max_receive_count": 1, "target": "local"},
            "context max_receive_count=1 is invalid: use a whole number from 2",
        ),
        ({"removal": "keep"}, "context removal='keep' is invalid: use one of retain, destroy"),
        ({"target": "docker"}, "context target='docker' is invalid: use one of aws, local"),
        ({"max_concurrency": 1}, "context max_concurrency=1 is invalid: use a whole number from 2 to 1000"),
        ({"max_concurrency": "1001"}, "context max_concurrency='1001' is invalid"),
        ({"oldest_job_age_alarm_seconds": 30}, "context oldest_job_age_alarm_seconds=30 is invalid"),
        (
            {"alarm_email": "not-an-address"},
            "context alarm_email='not-an-address' is invalid: use an email address",
        ),
        (
            {"job_retention_days": 14},
            "context job_retention_days=14 is invalid: use a whole number from 1 to 13",
        ),
        (
            {"dead_letter_retention_days": 15},
            "context dead_letter_retention_days=15 is invalid: use a whole number from 2 to 14",
        ),
        (
            {"job_retention_days": 9, "dead_letter_retention_days": 9},
            "context dead_letter_retention_days=9 is invalid: it must exceed job_retention_days=9",
        ),
        (
            {"job_retention_days": 9, "dead_letter_retention_days": 9, "fifo": "true"},
            "must exceed job_retention_days=9 (SQS advises a DLQ retention longer than the source's)",
        ),
        (
            {"order_retention_days": "20"},
            (
                "context order_retention_days=20 is shorter than the 21 days a copy of an order can "
                "still be delivered (job_retention_days=7 + dead_letter_retention_days=14 + "
                "producer_resend_days=0)"
            ),
        ),
        (
            {"order_retention_days": "30", "producer_resend_days": "10"},
            "context order_retention_days=30 is shorter than the 31 days",
        ),
        (
            {"order_retention_days": "27", "fifo": "true"},
            (
                "context order_retention_days=27 is shorter than the 28 days a copy of an order can "
                "still be delivered (2 x job_retention_days=7 + dead_letter_retention_days=14 + "
                "producer_resend_days=0: a FIFO queue restarts a message's retention at its move into "
                "the DLQ)"
            ),
        ),
        (
            {"order_retention_days": "21", "fifo": True},
            "context order_retention_days=21 is shorter than the 28 days",
        ),
        (
            {"order_retention_days": "0"},
            "context order_retention_days='0' is invalid: use a whole number from 1",
        ),
        ({"order_retention_days": "a month"}, "context order_retention_days='a month' is invalid"),
        ({"tags": "team"}, "context tags='team' is invalid: 'team' is not key=value"),
        ({"tags": "=orders"}, "context tags='=orders' is invalid: '=orders' is not key=value"),
        ({"tags": "aws:team=orders"}, "key 'aws:team' uses the prefix aws:, which AWS reserves"),
        ({"tags": "team=a,team=b"}, "context tags='team=a,team=b' is invalid: key 'team' is given twice"),
        ({"tags": "team#1=a"}, "key 'team#1' must be 1-128 letters, digits, spaces or _.:/+-@"),
        ({"tags": "team=a;b"}, "value 'a;b' of team must be up to 256"),
        ({"tags": ",".join(f"k{i}=v" for i in range(51))}, "context tags has 51 tags: AWS allows at most 50"),
        ({"tracing": "yes"}, "context tracing='yes' is invalid: use one of false, true"),
        ({"fifo": "yes"}, "context fifo='yes' is invalid: use one of false, true"),
        (
            {"content_based_deduplication": "true"},
            "context content_based_deduplication=true needs fifo=true: only a FIFO queue deduplicates",
        ),
        (
            {"content_based_deduplication": "on", "fifo": "true"},
            "context content_based_deduplication='on' is invalid: use one of false, true",
        ),
        (
            {"producer_resend_days": "-1"},
            "context producer_resend_days='-1' is invalid: use a whole number from 0",
        ),
    ],
)
def test_bad_context_is_a_one_line_error_naming_the_value(context, message):
    """Each bad value raises ConfigError whose single line names the key and the value."""
    with pytest.raises(ConfigError) as raised:
        StackConfig.from_context(context)
    assert message in str(raised.value)
    assert "\n" not in str(raised.value)


def test_every_dead_letter_is_kept_the_difference_and_warned_two_days_before():
    """Expiry counts from the first enqueue: a dead letter has at least DLQ minus jobs retention
    in the DLQ, and the expiry alarm fires two days before the earliest possible expiry."""
    config = StackConfig.from_context({"job_retention_days": "4", "dead_letter_retention_days": "14"})
    assert (config.dead_letter_days_guaranteed, config.dead_letter_expiry_alarm_days) == (10, 8)
    default = StackConfig.from_context({})
    assert (default.dead_letter_days_guaranteed, default.dead_letter_expiry_alarm_days) == (7, 5)


def test_order_retention_must_outlast_every_copy_that_can_still_be_delivered():
    """The shortest retention accepted is jobs + DLQ retention + the producer's resend window;
    none (the default) keeps orders for ever."""
    assert StackConfig.from_context({}).order_retention_seconds is None
    config = StackConfig.from_context(
        {"order_retention_days": "25", "producer_resend_days": "2", "job_retention_days": "4"}
    )
    assert (config.redelivery_window_days, config.order_retention_seconds) == (20, 25 * 86_400)
    with pytest.raises(ConfigError):
        StackConfig.from_context(
            {"order_retention_days": "19", "producer_resend_days": "2", "job_retention_days": "4"}
        )


def test_a_fifo_dead_letter_keeps_the_whole_dlq_retention_and_needs_a_longer_order_retention():
    """On FIFO queues SQS resets a message's enqueue time at its move to the DLQ: a dead letter has
    the DLQ's whole retention there, and a copy can arrive up to resend + jobs + DLQ + jobs
    retention after its first send (28 days with the defaults, where a standard queue needs 21)."""
    fifo = StackConfig.from_context({"fifo": "true", "order_retention_days": "28"})
    assert (fifo.dead_letter_days_guaranteed, fifo.dead_letter_expiry_alarm_days) == (14, 12)
    assert (fifo.redelivery_window_days, fifo.order_retention_seconds) == (28, 28 * 86_400)
    standard = StackConfig.from_context({"order_retention_days": "21"})
    assert (standard.dead_letter_days_guaranteed, standard.redelivery_window_days) == (7, 21)
    shorter = {"job_retention_days": "4", "dead_letter_retention_days": "10", "producer_resend_days": "3"}
    assert StackConfig.from_context({**shorter, "fifo": "true"}).redelivery_window_days == 3 + 4 + 10 + 4
    assert StackConfig.from_context({**shorter, "order_retention_days": "17"}).redelivery_window_days == 17
    with pytest.raises(ConfigError, match="shorter than the 21 days"):
        StackConfig.from_context({**shorter, "fifo": "true", "order_retention_days": "20"})


def test_tags_are_key_value_pairs_in_order():
    """`-c tags=...`: pairs split on commas and the first `=`, spaces around them dropped; none by default."""
    assert StackConfig.from_context({}).tags == ()
    assert StackConfig.from_context({"tags": "team=orders, cost center=cc 42,note=a=b"}).tags == (
        ("team", "orders"),
        ("cost center", "cc 42"),
        ("note", "a=b"),
    )


def test_tracing_is_off_unless_asked_for():
    """`-c tracing=true` (or cdk.json's JSON true) turns it on; the default is off."""
    assert StackConfig.from_context({}).tracing is False
    assert StackConfig.from_context({"tracing": "true"}).tracing is True
    assert StackConfig.from_context({"tracing": True}).tracing is True


def test_fifo_names_both_queues_with_the_fifo_suffix():
    """`-c fifo=true` makes `<prefix>-jobs.fifo` and its DLQ `<prefix>-jobs-dlq.fifo` (a FIFO queue's
    DLQ must be FIFO); every other name stays; content-based deduplication is off unless asked for."""
    config = StackConfig.from_context({"fifo": "true", "prefix": "team-a"})
    names = config.names
    assert (config.fifo, config.content_based_deduplication) == (True, False)
    assert (names.jobs_queue, names.dead_letter_queue, names.orders_table, names.worker_function) == (
        "team-a-jobs.fifo",
        "team-a-jobs-dlq.fifo",
        "team-a-orders",
        "team-a-worker",
    )
    assert StackConfig.from_context(
        {"fifo": True, "content_based_deduplication": "true"}
    ).content_based_deduplication
    assert StackConfig.from_context({}).fifo is False


def test_a_local_run_may_redrive_after_two_receives_an_aws_one_after_five():
    assert StackConfig.from_context({"max_receive_count": "2", "target": "local"}).max_receive_count == 2
    with pytest.raises(ConfigError):
        StackConfig.from_context({"max_receive_count": "2"})


def test_handler_and_stack_agree_on_the_table_env_var(worker):
    """The env var the stack sets is the one the handler reads."""
    assert worker.TABLE_NAME_ENV == WORKER_TABLE_ENV


def test_handler_and_stack_agree_on_the_decision_metrics(worker):
    """The alarms and dashboard name the metrics the worker emits, in the namespace it uses."""
    assert worker.METRICS_NAMESPACE_ENV == WORKER_METRICS_NAMESPACE_ENV
    assert worker.DEFAULT_METRICS_NAMESPACE == METRICS_NAMESPACE
    assert tuple(metric.value for metric in worker.Metric) == DECISION_METRICS
