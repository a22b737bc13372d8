"""Hold this process to a share of one CPU, as Lambda holds a function to memory/1769 of a vCPU,
through a Linux CPU cgroup (the CFS bandwidth limit: `quota` of CPU time in every `period`).

Used by the batch benchmark to measure the handlers at the stack's memory instead of only
computing it. It needs write access to a cgroup hierarchy with the cpu controller (root, on
cgroup v1's `cpu` mount or at the root of cgroup v2); where there is none, `held_to` says why in
one line and nothing is changed. The limit is a cgroup inside this process's own, so it adds
to any limit already there. Processes started before the call (the embedded AWS) stay outside;
threads and processes started after it are held too.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
# A short period spreads the share evenly over an invocation of a few milliseconds, as a
# steady fraction of a CPU, instead of a full core for part of every 100 ms (the default).
PERIOD_US = 10_000
MIN_QUOTA_US = 1_000  # the kernel's smallest quota


class Unavailable(RuntimeError):
    """No CPU cgroup can be made here; the message says why in one line."""


def _own_cgroup() -> tuple[Path, str]:
    """(this process's cgroup folder with the cpu controller, "v1" or "v2"), from /proc."""
    lines = Path("/proc/self/cgroup").read_text().splitlines()
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "cpu" in controllers.split(","):
            folder = CGROUP_ROOT / "cpu" / path.lstrip("/")
            if (folder / "cpu.cfs_quota_us").exists():
                return folder, "v1"
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controllers == "":
            folder = CGROUP_ROOT / path.lstrip("/")
            controls = folder / "cgroup.subtree_control"
            if controls.exists() and "cpu" in controls.read_text().split():
                return folder, "v2"
    raise Unavailable(f"no cgroup of this process has the cpu controller under {CGROUP_ROOT}")


@contextmanager
def held_to(share: float) -> Iterator[float]:
    """Inside the block this process gets at most `share` of one CPU; yields the share applied
    (the quota is whole microseconds). Raises Unavailable before changing anything."""
    if not 0 < share <= 1:
        raise ValueError(f"a CPU share is in (0, 1], got {share}")
    quota = round(share * PERIOD_US)
    if quota < MIN_QUOTA_US:
        raise Unavailable(
            f"a share of {share:.3f} is under the kernel's smallest quota at a {PERIOD_US} us period"
        )
    parent, version = _own_cgroup()
    group = parent / f"bench-cpu-share-{os.getpid()}"
    try:
        group.mkdir()
    except OSError as error:
        raise Unavailable(f"cannot make a cgroup in {parent}: {error.strerror}") from None
    try:
        if version == "v1":
            (group / "cpu.cfs_period_us").write_text(str(PERIOD_US))
            (group / "cpu.cfs_quota_us").write_text(str(quota))
        else:
            (group / "cpu.max").write_text(f"{quota} {PERIOD_US}")
        (group / "cgroup.procs").write_text(str(os.getpid()))
    except OSError as error:
        group.rmdir()
        raise Unavailable(f"cannot limit the cgroup {group}: {error.strerror}") from None
    try:
        yield quota / PERIOD_US
    finally:
        (parent / "cgroup.procs").write_text(str(os.getpid()))
        group.rmdir()
