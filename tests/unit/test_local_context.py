"""`make up/demo CONTEXT="..."`: the context words a local deploy takes, checked as synth checks
them; and what the lab scenario adds to a send when the jobs queue is FIFO."""

from __future__ import annotations

import pytest

from local.scenario import fifo_send_args
from local.session import LocalError, parse_context
from stacks.config import CONTEXT_DEFAULTS
from tests.full_context import FULL_CONTEXT, make_up_words
from tests.infra.test_context_synth import documented_keys


def test_context_words_become_the_deploys_values():
    """`fifo=true batch_size=10` gives both as `-c` values; quoting keeps a value with spaces whole."""
    assert parse_context("fifo=true batch_size=10") == {"fifo": "true", "batch_size": "10"}
    assert parse_context("tags='team=orders,cost center=cc 42'") == {"tags": "team=orders,cost center=cc 42"}
    assert parse_context("") == {}


@pytest.mark.parametrize(
    "text,message",
    [
        ("fifo", "context 'fifo' is not key=value"),
        ("=true", "context '=true' is not key=value"),
        ("bogus=1", "context key 'bogus' is unknown: use one of prefix, batch_size"),
        ("batch_size=42", "context batch_size='42' is invalid: use a whole number from 1 to 10"),
        ("content_based_deduplication=true", "content_based_deduplication=true needs fifo=true"),
        ("tags='unclosed", "cannot be read"),
    ],
)
def test_a_bad_context_word_is_one_line_naming_it(text, message):
    """A bad key or value stops `make up` before anything starts, with synth's own line."""
    with pytest.raises(LocalError) as raised:
        parse_context(text)
    assert message in str(raised.value) and "\n" not in str(raised.value)


def test_a_fifo_send_carries_the_order_id_as_group_and_a_deduplication_id_unless_by_content():
    """Standard queue: nothing added. FIFO: group = order id, a fresh deduplication id per send,
    none when the queue deduplicates by content."""
    assert fifo_send_args("http://x/123/p-jobs", "o-1", False) == {}
    first = fifo_send_args("http://x/123/p-jobs.fifo", "o-1", False)
    second = fifo_send_args("http://x/123/p-jobs.fifo", "o-1", False)
    assert (
        first["MessageGroupId"] == "o-1"
        and first["MessageDeduplicationId"] != second["MessageDeduplicationId"]
    )
    assert fifo_send_args("http://x/123/p-jobs.fifo", "o-1", True) == {"MessageGroupId": "o-1"}


def test_make_up_takes_every_documented_key_at_once():
    """The context tests/e2e/test_every_context_key.py deploys, as `make up CONTEXT="..."` words:
    every key of docs/deploy.md's table, each off its default, is accepted whole."""
    assert sorted(FULL_CONTEXT) == sorted(documented_keys())
    assert [key for key, value in FULL_CONTEXT.items() if value == str(CONTEXT_DEFAULTS[key]).lower()] == []
    assert parse_context(make_up_words()) == FULL_CONTEXT


def test_demo_with_removal_retain_is_refused_before_anything_starts(tmp_path, capsys):
    """`make demo CONTEXT="removal=retain"`: the demo's last check (nothing left) cannot hold by
    design, so it stops at once with one line pointing at `make up`; no emulator is started."""
    from local.__main__ import main

    assert main(["demo", "--state-dir", str(tmp_path), "--context", "removal=retain"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: make demo ends by destroying")
    assert 'make up CONTEXT="removal=retain"' in err[0]
    assert not any(tmp_path.iterdir())
