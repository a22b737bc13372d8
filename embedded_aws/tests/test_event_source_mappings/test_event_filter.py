"""FilterCriteria as the Lambda service evaluates them on SQS records (lambda_host/event_source_mappings/filters.py):
the operators invocation-eventfiltering.html lists, the body format rule of
with-sqs-filtering.html, and what is refused when a mapping is created or updated."""

from __future__ import annotations

import json

import pytest

from embedded_aws.lambda_host.event_source_mappings.filters import (
    FilterError,
    compile_filters,
    record_matches,
)


def record(body: str, **extra) -> dict:
    return {
        "messageId": "m-1",
        "body": body,
        "attributes": {"ApproximateReceiveCount": "1"},
        "messageAttributes": {},
        "eventSource": "aws:sqs",
        **extra,
    }


def matches(body: str, *patterns: dict) -> bool:
    criteria = {"Filters": [{"Pattern": json.dumps(p)} for p in patterns]}
    return record_matches(record(body), compile_filters(criteria))


ORDER = json.dumps(
    {
        "id": "order-17",
        "kind": "Order",
        "quantity": 4,
        "price": 12.5,
        "gift": False,
        "note": None,
        "tags": ["red", "big"],
        "address": {"city": "Paris", "zip": "75001"},
    }
)


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        (["order-17"], True),
        (["order-18", "order-17"], True),  # a list of values is an OR
        (["order-18"], False),
        ([{"prefix": "order-"}], True),
        ([{"prefix": "ORDER-"}], False),  # exact, character by character
        ([{"suffix": "-17"}], True),
        ([{"suffix": "-1"}], False),
        ([{"equals-ignore-case": "ORDER-17"}], True),
        ([{"anything-but": "order-18"}], True),
        ([{"anything-but": ["order-17", "order-18"]}], False),
        ([{"anything-but": {"prefix": "order-"}}], False),
        ([{"anything-but": {"suffix": "-99"}}], True),
        ([{"exists": True}], True),
        ([{"exists": False}], False),
    ],
)
def test_string_operators_on_a_json_body(rule, expected):
    """Each string operator on a field of a JSON body."""
    assert matches(ORDER, {"body": {"id": rule}}) is expected


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        ([4], True),
        ([4.0], False),  # numbers compare by their written form: 4 and 4.0 differ
        (["4"], False),  # a string is not a number
        ([{"numeric": ["=", 4]}], True),
        ([{"numeric": [">", 3, "<=", 4]}], True),
        ([{"numeric": [">", 4]}], False),
        ([{"numeric": ["<", 10]}], True),
        ([{"numeric": [">=", 4.0]}], True),  # ranges compare values
    ],
)
def test_numbers(rule, expected):
    """Exact numbers match their written form; numeric ranges compare values."""
    assert matches(ORDER, {"body": {"quantity": rule}}) is expected


def test_null_empty_booleans_arrays_nesting_and_missing_fields():
    """null, false, a value inside an array, a nested object; a field the body lacks matches only
    `exists: false`, and every field of a pattern must match (AND)."""
    assert matches(ORDER, {"body": {"note": [None]}})
    assert matches(ORDER, {"body": {"gift": [False]}})
    assert not matches(ORDER, {"body": {"gift": [True]}})
    assert matches(ORDER, {"body": {"tags": ["big"]}})
    assert matches(ORDER, {"body": {"address": {"city": ["Paris"]}}})
    assert not matches(ORDER, {"body": {"address": {"city": ["Lyon"]}}})
    assert matches(ORDER, {"body": {"missing": [{"exists": False}]}})
    assert not matches(ORDER, {"body": {"missing": ["x"]}})
    assert not matches(ORDER, {"body": {"missing": [{"anything-but": "x"}]}})
    assert not matches(ORDER, {"body": {"kind": ["Order"], "quantity": [5]}})
    assert matches(json.dumps({"name": ""}), {"body": {"name": [""]}})


def test_or_of_fields_and_filters_are_ored():
    """`$or` of two patterns, and two filters of which one matches."""
    assert matches(ORDER, {"body": {"$or": [{"kind": ["Refund"]}, {"quantity": [{"numeric": [">", 3]}]}]}})
    assert not matches(ORDER, {"body": {"$or": [{"kind": ["Refund"]}, {"quantity": [1]}]}})
    assert matches(ORDER, {"body": {"kind": ["Refund"]}}, {"body": {"kind": ["Order"]}})
    assert not matches(ORDER, {"body": {"kind": ["Refund"]}}, {"body": {"kind": ["Return"]}})


def test_body_format_must_fit_the_pattern():
    """with-sqs-filtering.html: a JSON pattern on a plain-string body, or a plain-string pattern
    on a JSON body, drops the message; plain string on plain string filters as strings."""
    assert matches("order 17 please", {"body": [{"prefix": "order"}]})
    assert not matches("order 17 please", {"body": {"id": [{"exists": True}]}})
    assert not matches(ORDER, {"body": [{"prefix": "{"}]})
    assert not matches("42", {"body": ["42"]})  # "42" is JSON (a number), the pattern a string


def test_other_record_keys_and_no_filters():
    """A pattern without `body` is matched against the record and skips the format check; no
    FilterCriteria (or an empty one) lets everything through."""
    assert matches("plain", {"eventSource": ["aws:sqs"]})
    assert not matches("plain", {"eventSource": ["aws:kinesis"]})
    assert record_matches(record("anything"), compile_filters(None))
    assert record_matches(record("anything"), compile_filters({}))
    assert record_matches(record("anything"), compile_filters({"Filters": []}))


@pytest.mark.parametrize(
    "criteria",
    [
        {"Filters": [{"Pattern": json.dumps({"body": {"a": [1]}})}] * 6},  # more than five filters
        {"Filters": [{"Pattern": "{not json"}]},
        {"Filters": [{"Pattern": "[1, 2]"}]},
        {"Filters": [{"Pattern": json.dumps({"body": {"a": 1}})}]},  # a value, not a list of rules
        {"Filters": [{"Pattern": json.dumps({"body": {"a": [{"wildcard": "*.png"}]}})}]},  # not implemented
        {"Filters": [{"Pattern": json.dumps({"body": {"a": [{"numeric": [">", "1"]}]}})}]},
        {"Filters": [{"Pattern": json.dumps({"body": {"a": [{"prefix": 1}]}})}]},
        {"Filters": [{"Pattern": json.dumps({"body": {"a": [{"cidr": "10.0.0.0/24"}]}})}]},
        {"Filters": [{"Pattern": "x" * 4097}]},
    ],
)
def test_refused_criteria(criteria):
    """What AWS refuses, and the rules this host does not implement, raise FilterError (the
    emulator answers InvalidParameterValueException)."""
    with pytest.raises(FilterError):
        compile_filters(criteria)
