"""The lab's end state after its own clean-up (the mapping, the jobs queue, both orders and the
worker's log group deleted by hand), checked one line at a time against a snapshot.

A check passes only on evidence: an absent resource is one AWS said does not exist (the call and
its code are the evidence); a read that failed for any other reason (denied, throttled,
unreachable) fails the check with that reason, since it proves nothing about the resource.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from ops.snapshot import section_state
from stacks.config import REFERENCE_ITEM

if TYPE_CHECKING:
    from ops.snapshot import Snapshot


@dataclass(frozen=True)
class Check:
    check: str
    ok: bool
    evidence: str

    def as_json(self) -> dict[str, Any]:
        return asdict(self)


def _evidence(snapshot: Snapshot, section: str) -> str:
    found = snapshot["resources"].get(section)
    return "" if found is None else (found["detail"] or found["call"]).strip()


def _cannot_tell(snapshot: Snapshot, section: str) -> str:
    return f"cannot tell: {snapshot['errors'].get(section) or _evidence(snapshot, section)}"


def started(snapshot: Snapshot) -> bool:
    """The lab's clean-up has begun: something it deletes (the worker's event source mapping, the
    jobs queue, the worker's log group) is gone, as AWS said. Before that the checks describe an
    end state nobody has asked for yet: the view shows them as not started, not as failing."""
    mapping_gone = section_state(snapshot, "mappings") == "present" and snapshot["mappings"] == []
    return mapping_gone or any(
        section_state(snapshot, section) == "absent" for section in ("mappings", "jobs", "log")
    )


def checks(snapshot: Snapshot) -> list[Check]:
    """The lab's expected end state, one check per line, each with its evidence."""
    target = snapshot["target"]
    if snapshot["error"] or target is None:
        why = f"cannot tell: {snapshot['error']}"
        names = ("the event source mapping", "the jobs queue", "the orders", "the reference item")
        return [Check(f"{name} (nothing could be read)", False, why) for name in names]
    found: list[Check] = []

    # No mapping for the worker: an empty list, or no such function to map.
    what = f"no event source mapping for {target['function_name']}"
    state, mappings = section_state(snapshot, "mappings"), snapshot["mappings"]
    if state == "present" and not mappings:
        found.append(Check(what, True, "ListEventSourceMappings: none"))
    elif state == "present":
        listed = ", ".join(f"{m['uuid']} ({m['state']})" for m in mappings or [])
        found.append(Check(what, False, f"ListEventSourceMappings: {listed}"))
    elif state == "absent":
        found.append(Check(what, True, _evidence(snapshot, "mappings")))
    else:
        found.append(Check(what, False, _cannot_tell(snapshot, "mappings")))

    what = f"no jobs queue {target['jobs_queue']}"
    state = section_state(snapshot, "jobs")
    if state == "absent":
        found.append(Check(what, True, _evidence(snapshot, "jobs")))
    elif state == "present":
        counters = snapshot["queues"]["jobs"] or {}
        found.append(Check(what, False, f"GetQueueAttributes: it exists ({counters.get('visible')} visible)"))
    else:
        found.append(Check(what, False, _cannot_tell(snapshot, "jobs")))

    what = f"no order items in {target['orders_table']}"
    state, orders = section_state(snapshot, "orders"), snapshot["orders"]
    if state == "present" and not orders:
        found.append(Check(what, True, "Scan: 0 items"))
    elif state == "present" and orders is not None:
        ids = ", ".join(str(item.get("id")) for item in orders[:5])
        found.append(Check(what, False, f"Scan: {len(orders)} item(s): {ids}"))
    elif state == "absent":
        found.append(Check(what, False, f"the table itself is gone: {_evidence(snapshot, 'orders')}"))
    else:
        found.append(Check(what, False, _cannot_tell(snapshot, "orders")))

    # A consumer of another app has no reference table (ops/snapshot.py: no ReferenceTableName).
    lab = bool(target["reference_table"])
    what = f"the reference item in {target['reference_table']} unchanged"
    state, reference = section_state(snapshot, "reference"), snapshot["reference"]
    if lab and state == "present":
        shown = ", ".join(json.dumps(item, sort_keys=True) for item in reference or []) or "no items"
        found.append(Check(what, reference == [REFERENCE_ITEM], f"Scan: {shown}"))
    elif lab:
        found.append(Check(what, False, _cannot_tell(snapshot, "reference")))

    tables = [("function", f"the worker function {target['function_name']}")]
    tables.append(("orders", f"the orders table {target['orders_table']}"))
    if lab:
        tables.append(("reference", f"the reference table {target['reference_table']}"))
    for section, name in tables:
        what, state = f"{name} still there", section_state(snapshot, section)
        if state == "present":
            function = snapshot["function"] or {}
            answered = f"State {function.get('state')}" if section == "function" else "the table answered"
            found.append(Check(what, True, f"{snapshot['resources'][section]['call']}: {answered}"))
        elif state == "absent":
            found.append(Check(what, False, f"deleted: {_evidence(snapshot, section)}"))
        else:
            found.append(Check(what, False, _cannot_tell(snapshot, section)))
    return found


def format_lines(found: list[Check]) -> list[str]:
    width = max((len(check.check) for check in found), default=0)
    return [f"{'ok' if check.ok else 'FAIL':<4}  {check.check:<{width}}  {check.evidence}" for check in found]
