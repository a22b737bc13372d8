"""The CDK context values of a local deploy: what every local stack sets, and make's CONTEXT read
and checked as synth checks it."""

from __future__ import annotations

import shlex

from local.reporting import LocalError
from stacks.config import CONTEXT_DEFAULTS, ConfigError, StackConfig

# Local stacks go entirely on destroy; otherwise the template is the one an account gets.
LOCAL_CONTEXT = {"removal": "destroy"}


def parse_context(text: str) -> dict[str, str]:
    """`key=value key2=value2` (make's CONTEXT) as the `-c` values of the local deploy, checked as
    synth checks them, so a bad key or value stops before the emulator starts."""
    context: dict[str, str] = {}
    try:
        words = shlex.split(text)
    except ValueError as error:
        raise LocalError(f"context {text!r} cannot be read: {error}") from None
    for word in words:
        key, sep, value = word.partition("=")
        if not sep or not key:
            raise LocalError(f"context {word!r} is not key=value")
        if key not in CONTEXT_DEFAULTS:
            raise LocalError(f"context key {key!r} is unknown: use one of {', '.join(CONTEXT_DEFAULTS)}")
        context[key] = value
    try:
        StackConfig.from_context({**LOCAL_CONTEXT, **context})
    except ConfigError as error:
        raise LocalError(str(error)) from None
    return context
