"""When the lab's clean-up check counts (ops/cleanup_check.py `started`): only once something the lab's
clean-up deletes is gone, as AWS said. A running deployment, or one that cannot be read, has not
begun a clean-up, so the view shows its checks as not started rather than failing."""

from __future__ import annotations

from typing import Any

import pytest

from ops.cleanup_check import started


def snapshot(listed: Any = ("a mapping",), **states: str) -> dict[str, Any]:
    """A snapshot's sections in these states (present unless said), with these mappings listed."""
    sections = {"mappings": "present", "jobs": "present", "log": "present", **states}
    return {
        "resources": {name: {"state": state} for name, state in sections.items()},
        "mappings": list(listed) if listed is not None else None,
    }


@pytest.mark.parametrize(
    ("found", "begun"),
    [
        (snapshot(), False),
        (snapshot(listed=None, mappings="unreadable"), False),
        (snapshot(jobs="unreadable", log="unreadable"), False),
        (snapshot(listed=()), True),
        (snapshot(listed=None, mappings="absent"), True),
        (snapshot(jobs="absent"), True),
        (snapshot(log="absent"), True),
    ],
)
def test_a_clean_up_has_begun_only_when_something_it_deletes_is_gone(found, begun):
    """Running, or unreadable: not begun. No mapping, or the jobs queue or log gone: begun."""
    assert started(found) is begun
