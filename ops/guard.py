"""Who may talk to a server we start on this machine: the loopback rules of the embedded AWS's
front door (`embedded_aws.server.guard`, where they are explained), which the live view
(`ops/view/server.py`) applies too. One implementation: the emulator depends on nothing of ours,
so the rules live there and this module only names them for `ops`."""

from __future__ import annotations

from embedded_aws.server.guard import LOOPBACK_NAMES, refusal

__all__ = ["LOOPBACK_NAMES", "refusal"]
