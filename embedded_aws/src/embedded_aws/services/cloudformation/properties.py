"""Reading CloudFormation resource properties as the resource types here need them (a template
may spell a boolean as a string, a policy as an object)."""

from __future__ import annotations

import json
from typing import Any


def json_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def boolean(value: Any, default: bool = False) -> bool:
    if value is None:
        return default
    return value if isinstance(value, bool) else str(value).lower() == "true"


def integer(value: Any) -> int | None:
    return None if value is None else int(value)
