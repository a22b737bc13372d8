"""Hypothesis strategies for job bodies that must be rejected, every class the worker knows."""

from __future__ import annotations

import json
import re

from hypothesis import strategies as st

# One line naming the problem: every message parse_job may produce starts like one of these.
ERROR_LINE = re.compile(
    r"^(body is not valid JSON: |body must be |missing field: |unexpected field: |duplicate field: "
    r"|id must be |id is too long: |quantity must be ).{1,240}$"
)

_valid_id = st.text(min_size=1, max_size=24).filter(lambda s: s.strip())
_valid_quantity = st.integers(1, 10)
_scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=12)
)
_json_values = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=6,
)
_bad_ids = st.one_of(
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
    st.none(),
    st.lists(_scalars, max_size=3),
    st.dictionaries(st.text(max_size=6), _json_values, max_size=3),
    st.just(""),
    st.text(alphabet=" \t\r\n\u00a0\u2003", min_size=1, max_size=8),
    st.text(min_size=1025, max_size=1100),  # over the 1024-byte id limit whatever the characters
)
_bad_quantities = st.one_of(
    st.booleans(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.integers(max_value=0),
    st.integers(min_value=11),
    st.text(max_size=6),
    st.none(),
    st.lists(_scalars, max_size=3),
    st.dictionaries(st.text(max_size=6), _scalars, max_size=2),
)
_extra_key = st.text(max_size=10).filter(lambda key: key not in ("id", "quantity"))


def _parses_to_object(text: str) -> bool:
    try:
        return isinstance(json.loads(text), dict)
    except (ValueError, RecursionError):
        return False


def _dump(value: object, ascii_only: bool) -> str:
    return json.dumps(value, ensure_ascii=ascii_only)


@st.composite
def malformed_bodies(draw: st.DrawFn) -> str:
    """A body that is wrong in at least one way the worker must reject."""
    ascii_only = draw(st.booleans())
    # Oversize bodies are one in 25, so a thousand of them stay a few megabytes.
    kind = (
        "oversize"
        if draw(st.integers(0, 24)) == 0
        else draw(
            st.sampled_from(
                [
                    "not-json",
                    "not-object",
                    "missing",
                    "extra",
                    "repeated-key",
                    "bad-id",
                    "bad-quantity",
                    "both-bad",
                ]
            )
        )
    )
    if kind == "not-json":
        return draw(
            st.text(min_size=0, max_size=40).filter(lambda t: not _parses_to_object(t) and not _is_json(t))
        )
    if kind == "not-object":
        return _dump(draw(_json_values.filter(lambda v: not isinstance(v, dict))), ascii_only)
    if kind == "missing":
        present = draw(st.sampled_from([{}, {"id": draw(_valid_id)}, {"quantity": draw(_valid_quantity)}]))
        return _dump(present, ascii_only)
    if kind == "extra":
        body = {
            "id": draw(_valid_id),
            "quantity": draw(_valid_quantity),
            draw(_extra_key): draw(_json_values),
        }
        return _dump(body, ascii_only)
    if kind == "repeated-key":
        key = draw(st.sampled_from(["id", "quantity"]))
        fields = [
            f'"id": {_dump(draw(_valid_id), ascii_only)}',
            f'"quantity": {draw(_valid_quantity)}',
            f'"{key}": {_dump(draw(_json_values), ascii_only)}',
        ]
        return "{" + ", ".join(draw(st.permutations(fields))) + "}"
    if kind == "bad-id":
        return _dump({"id": draw(_bad_ids), "quantity": draw(_valid_quantity)}, ascii_only)
    if kind == "bad-quantity":
        return _dump({"id": draw(_valid_id), "quantity": draw(_bad_quantities)}, ascii_only)
    if kind == "both-bad":
        return _dump({"id": draw(_bad_ids), "quantity": draw(_bad_quantities)}, ascii_only)
    # Oversize: far beyond any valid body, and wrong (an extra padding field).
    size = draw(st.integers(65_536, 100_000))
    return _dump(
        {"id": draw(_valid_id), "quantity": draw(_valid_quantity), "padding": "x" * size}, ascii_only
    )


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True


_SQS_INVALID = re.compile("[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def sqs_sendable(body: str) -> bool:
    """SQS accepts a body of at least one character, and only these characters."""
    return bool(body) and not _SQS_INVALID.search(body)
