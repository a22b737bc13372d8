"""The local-run driver (local/session.py): `down` stops everything whatever fails, and says
what is left of the stack."""

from __future__ import annotations

import pytest

from local.session import LocalError, LocalSession


def session_with(tmp_path, *, delete_fails: bool, left: dict):
    stopped = []

    class Stub(LocalSession):
        state = {"pid": 1, "port": 1}  # noqa: RUF012 - one stub per test

        def delete_stack(self, timeout=60):
            if delete_fails:
                raise LocalError("deleting stack labex-q05-consumer failed: queue busy")

        def leftovers(self):
            return left

        def stop_emulator(self, timeout=30):
            stopped.append(True)

    session = Stub(tmp_path)
    session.outputs_path.write_text("{}")
    return session, stopped


def test_down_stops_everything_even_when_the_delete_fails(tmp_path):
    """A failed delete still stops the emulator, then says what failed and what was left."""
    session, stopped = session_with(
        tmp_path, delete_fails=True, left={"queues": ["http://localhost:1/123456789012/p-jobs"], "tables": []}
    )
    with pytest.raises(LocalError) as raised:
        session.down()
    assert stopped == [True]
    assert str(raised.value) == (
        "deleting stack labex-q05-consumer failed: queue busy; still there when the emulator "
        "stopped: queues: http://localhost:1/123456789012/p-jobs; everything stopped anyway"
    )


def test_down_says_nothing_of_the_stack_is_left(tmp_path, capsys):
    session, stopped = session_with(tmp_path, delete_fails=False, left={"queues": [], "tables": []})
    session.down()
    assert stopped == [True]
    assert capsys.readouterr().err.splitlines()[-1] == (
        "local stack down: stack deleted (nothing of it left), embedded AWS stopped"
    )
