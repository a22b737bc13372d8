"""The README's first command, `make demo`, typed in a clean shell whose PATH holds only the
system's Python and Node: it brings up the embedded AWS, deploys, checks the lab scenario,
destroys and stops, on the port in `PORT` (so it cannot meet a stack of the user's)."""

from __future__ import annotations

import pytest

from local.session import free_port, port_in_use
from tests.documented import bare_path_premise, block_starting, clean_env, run_in_one_shell

pytestmark = [pytest.mark.e2e, pytest.mark.slow, pytest.mark.long_wait(60)]


def test_make_demo_as_written(tmp_path):
    """`make demo` exits 0 after printing every check of the lab as passed and that nothing of
    the stack remains; nothing is left listening on its port."""
    block = block_starting("README.md", "make demo", "tests/e2e/test_make_demo.py")
    (demo,) = [c for c in block.commands if c.startswith("make demo")]
    port = free_port()
    env = clean_env(tmp_path / "home", PORT=str(port), LOCAL_STATE_DIR=str(tmp_path / "state"))
    bare_path_premise(env)
    (ran,) = run_in_one_shell([demo], env)
    assert ran.rc == 0, ran.output[-3000:]
    assert "after destroy: nothing of the stack remains" in ran.output
    assert "all checks passed" in ran.output and "FAILED" not in ran.output
    assert not port_in_use(port)
