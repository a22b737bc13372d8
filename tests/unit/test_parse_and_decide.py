"""The worker's pure core: parsing a job body and deciding what a delivery amounts to."""

from __future__ import annotations

import json

import pytest


def test_valid_body_becomes_job_with_lab_totals(worker):
    """The lab's figures: quantity 4 costs 1100 cents, quantity 1 costs 350."""
    job = worker.parse_job('{"id":"dedup-order","quantity":4}')
    assert job.item() == {"id": "dedup-order", "quantity": 4, "total_cents": 1100}
    assert worker.parse_job('{"quantity": 1, "id": "other-order"}').item() == {
        "id": "other-order",
        "quantity": 1,
        "total_cents": 350,
    }


@pytest.mark.parametrize("quantity,total", [(1, 350), (10, 2600)])
def test_quantity_bounds_are_inclusive(worker, quantity, total):
    """1 and 10 are valid quantities; total_cents = quantity*250 + 100."""
    assert worker.parse_job(json.dumps({"id": "o", "quantity": quantity})).total_cents == total


@pytest.mark.parametrize(
    "body,fragment",
    [
        ("not json", "body is not valid JSON"),
        ("", "body is not valid JSON"),
        ('{"id": "a", "quantity": NaN}', "NaN is not a JSON value"),
        ("[1, 2]", "must be a JSON object"),
        ('"just a string"', "must be a JSON object"),
        ("null", "must be a JSON object"),
        ('{"quantity": 1}', "missing field: id"),
        ('{"id": "a"}', "missing field: quantity"),
        ("{}", "missing field: id, quantity"),
        ('{"id": "a", "quantity": 1, "note": "x"}', "unexpected field: 'note'"),
        ('{"id": "a", "id": "b", "quantity": 1}', "duplicate field: 'id'"),
        ('{"id": 7, "quantity": 1}', "id must be a string, got int 7"),
        ('{"id": null, "quantity": 1}', "id must be a string, got NoneType"),
        ('{"id": ["a"], "quantity": 1}', "id must be a string, got list"),
        ('{"id": "", "quantity": 1}', "id must be a non-empty string"),
        ('{"id": "   ", "quantity": 1}', "id must be a non-empty string"),
        ('{"id": "a", "quantity": true}', "quantity must be an integer, got bool True"),
        ('{"id": "a", "quantity": false}', "quantity must be an integer, got bool False"),
        ('{"id": "a", "quantity": 4.0}', "quantity must be an integer, got float 4.0"),
        ('{"id": "a", "quantity": "4"}', "quantity must be an integer, got str '4'"),
        ('{"id": "a", "quantity": null}', "quantity must be an integer, got NoneType"),
        ('{"id": "a", "quantity": 0}', "quantity must be 1..10, got 0"),
        ('{"id": "a", "quantity": 11}', "quantity must be 1..10, got 11"),
        ('{"id": "a", "quantity": -3}', "quantity must be 1..10, got -3"),
        ('{"id": "a", "quantity": 100000000000000000000}', "quantity must be 1..10"),
    ],
)
def test_bad_bodies_fail_with_one_line_naming_the_problem(worker, body, fragment):
    """Every class of bad input raises JobError with a single line that names field and value."""
    with pytest.raises(worker.JobError) as raised:
        worker.parse_job(body)
    message = str(raised.value)
    assert fragment in message
    assert "\n" not in message


def test_non_string_body_is_rejected(worker):
    """A record without a body (None) is bad input, not a crash."""
    with pytest.raises(worker.JobError, match="body must be a string, got NoneType"):
        worker.parse_job(None)


def test_overlong_id_is_rejected_with_its_size(worker):
    """An id over 1024 bytes is refused before it reaches DynamoDB's key limit."""
    with pytest.raises(worker.JobError, match=r"id is too long: 2000 bytes"):
        worker.parse_job(json.dumps({"id": "x" * 2000, "quantity": 1}))


def test_long_values_are_clipped_in_messages(worker):
    """Error lines stay short even when the offending value is huge."""
    with pytest.raises(worker.JobError) as raised:
        worker.parse_job(json.dumps({"id": "a", "quantity": "9" * 5000}))
    assert len(str(raised.value)) < 200


def test_first_write_is_processed(worker):
    """No previous item: the write went in, result processed=true duplicate=false."""
    job = worker.Job("a", 2)
    assert worker.decide(job, None).result == {
        "id": "a",
        "quantity": 2,
        "processed": True,
        "duplicate": False,
    }


def test_identical_previous_item_is_an_acknowledged_duplicate(worker):
    """The stored item equals the requested one: processed=false duplicate=true."""
    job = worker.Job("a", 2)
    outcome = worker.decide(job, {"id": "a", "quantity": 2, "total_cents": 600})
    assert outcome.decision == "duplicate"
    assert outcome.result == {"id": "a", "quantity": 2, "processed": False, "duplicate": True}


@pytest.mark.parametrize(
    "existing",
    [
        {"id": "a", "quantity": 2, "total_cents": 600},
        {"id": "a", "quantity": 2, "total_cents": 550},  # stored before a price change
        {"id": "a", "quantity": 2},
        {"id": "a", "quantity": 2, "total_cents": 600, "note": "added by a later version"},
    ],
)
def test_a_stored_order_with_the_same_id_and_quantity_is_a_duplicate(worker, existing):
    """A repeated request is one with the same id and quantity; the stored total is the result it
    preserves, so a later price change (or another attribute) does not make redeliveries of
    stored orders conflicts."""
    assert worker.decide(worker.Job("a", 2), existing).decision == "duplicate"


@pytest.mark.parametrize(
    "existing",
    [
        {"id": "a", "quantity": 3, "total_cents": 850},
        {"id": "a", "total_cents": 600},
        {"id": "a", "quantity": "2", "total_cents": 600},
        {"id": "a", "quantity": 2.0, "total_cents": 600},
        {"id": "a", "quantity": None, "total_cents": 600},
    ],
)
def test_other_details_for_the_id_are_a_conflict(worker, existing):
    """Another quantity, none, or one of another type: a conflict, never acknowledged."""
    with pytest.raises(worker.ConflictingOrder, match="already stored with different details"):
        worker.decide(worker.Job("a", 2), existing)


def test_comparison_is_type_strict(worker):
    """A stored boolean true is not quantity 1 (bool is an int subclass in Python)."""
    with pytest.raises(worker.ConflictingOrder):
        worker.decide(worker.Job("a", 1), {"id": "a", "quantity": True, "total_cents": 350})
    assert (
        worker.decide(worker.Job("a", 1), {"id": "a", "quantity": 1, "total_cents": 350}).decision
        == "duplicate"
    )


def test_an_id_that_is_not_utf8_text_is_a_job_error(worker):
    """JSON may carry a lone surrogate; DynamoDB keys must be UTF-8: one line, not a UnicodeEncodeError."""
    with pytest.raises(worker.JobError, match=r"^id is not valid UTF-8 text, got '\\ud800'$"):
        worker.parse_job('{"id": "\\ud800", "quantity": 1}')
    with pytest.raises(worker.JobError, match="not valid UTF-8"):
        worker.parse_job('{"id": "ok\\udfff-tail", "quantity": 1}')
