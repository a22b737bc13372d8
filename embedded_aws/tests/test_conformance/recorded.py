"""What a conformance case is and how a local answer is held against it.

A case is one response AWS gave, as LocalStack recorded it (`*.snapshot.json`, validated on the
date its `*.validation.json` gives), reduced to what does not vary between runs: codes, messages,
states, the set of keys, counts. Values that vary (ids, ARNs, timestamps) are `ANY` or a `Like`
pattern; a key AWS leaves out is `ABSENT`; `Exactly` asks for the same set of keys as well.

A case that `matches` passes when the local answer has everything expected. A case that
`differs` on purpose says what the local answer is instead (`local`) and why, and one row of
docs/local-fidelity.md's data declares it (`case = "<id>"`): it passes while the local answer is that and not the
recorded one, so fixing the difference fails the test until the case and the count are updated.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

PROJECT = "localstack/localstack"


class _Absent:
    def __repr__(self) -> str:
        return "ABSENT"


class _Any:
    def __repr__(self) -> str:
        return "ANY"


ABSENT, ANY = _Absent(), _Any()


@dataclass(frozen=True)
class Like:
    """A string matching `pattern` (whole)."""

    pattern: str


@dataclass(frozen=True)
class Exactly:
    """A mapping with these keys and no others (ABSENT ones excluded), each matching."""

    fields: dict[str, Any]


@dataclass(frozen=True)
class Recording:
    """Where AWS's answer was recorded: LocalStack's file, the snapshot key (test id, then the
    name of the response within it) and the date that test was last validated against AWS."""

    file: str
    test: str
    response: str
    validated: str

    @property
    def key(self) -> str:
        return f"{self.file.removesuffix('.snapshot.json')}.py::{self.test}"


@dataclass(frozen=True)
class Case:
    id: str
    recording: Recording
    expected: Any
    local: Any = None  # for a case that differs on purpose: what the local answer is instead
    why: str = ""
    notes: str = field(default="")  # where the recording and AWS's documentation disagree, or a caveat

    @property
    def differs(self) -> bool:
        return self.local is not None


def differences(actual: Any, expected: Any, path: str = "$") -> list[str]:
    """Where `actual` does not have what `expected` asks for (empty: it conforms)."""
    if expected is ANY:
        return []
    if isinstance(expected, Like):
        if isinstance(actual, str) and re.fullmatch(expected.pattern, actual):
            return []
        return [f"{path}: {actual!r} does not match {expected.pattern!r}"]
    if isinstance(expected, Exactly):
        if not isinstance(actual, dict):
            return [f"{path}: {actual!r} is not an object"]
        wanted = {key for key, value in expected.fields.items() if value is not ABSENT}
        found = []
        if set(actual) != wanted:
            found.append(f"{path}: keys {sorted(actual)} instead of {sorted(wanted)}")
        return found + differences(actual, dict(expected.fields), path)
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{path}: {actual!r} is not an object"]
        found = []
        for key, value in expected.items():
            if value is ABSENT:
                if key in actual:
                    found.append(f"{path}.{key}: present ({actual[key]!r}), AWS has no such key")
            elif key not in actual:
                found.append(f"{path}.{key}: missing")
            else:
                found.extend(differences(actual[key], value, f"{path}.{key}"))
        return found
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return [f"{path}: {actual!r} instead of {len(expected)} item(s)"]
        return [
            d
            for index, (a, e) in enumerate(zip(actual, expected))
            for d in differences(a, e, f"{path}[{index}]")
        ]
    return [] if actual == expected else [f"{path}: {actual!r} instead of {expected!r}"]


def answer(response: Mapping[str, Any]) -> dict:
    """A boto3 response (or a ClientError's) without its metadata, with its HTTP status."""
    status = response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    return {
        **{key: value for key, value in response.items() if key != "ResponseMetadata"},
        "HTTPStatusCode": status,
    }
