"""The local-run driver (local/session.py): `down` stops everything whatever fails."""

from __future__ import annotations

import pytest


def test_down_stops_everything_even_when_the_destroy_fails(tmp_path):
    """A failed destroy still stops the emulator, then says what failed and what was left."""
    from local.session import LocalError, LocalSession

    stopped = []

    class FailingDestroy(LocalSession):
        state = {"pid": 1, "port": 1}

        def destroy(self):
            raise LocalError("cdk destroy failed (1): queue busy")

        def leftovers(self):
            return {"queues": ["http://localhost:1/123456789012/p-jobs"], "tables": []}

        def stop_emulator(self, timeout=30):
            stopped.append(True)

    session = FailingDestroy(tmp_path)
    session.outputs_path.write_text("{}")
    with pytest.raises(LocalError) as raised:
        session.down()
    assert stopped == [True]
    assert str(raised.value) == ("destroy failed, everything stopped anyway: cdk destroy failed (1): queue busy; "
                                 "still there when the emulator stopped: queues: http://localhost:1/123456789012/p-jobs")
