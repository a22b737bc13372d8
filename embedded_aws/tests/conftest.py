"""The embedded AWS's own tests, by service and subsystem (test_<service>/, one file per
feature), against the run's shared emulator (the `shared_aws` fixture of the root conftest.py)."""

from __future__ import annotations

import pytest

from tests.e2e.conftest import emulator  # noqa: F401 - the shared embedded AWS, for every test here


@pytest.fixture
def session(emulator):  # the shared fixture, under a shorter name
    return emulator
