"""pytest plugin shipped with the test kit: fixtures for plugin authors.

Installed through the `pytest11` entry point, so any project that installs kube-pyscheduler
gets the fixtures without configuration.
"""

from __future__ import annotations

import pytest

from scheduler.testing.fake_clock import FakeClock


@pytest.fixture
def fake_clock() -> FakeClock:
    """A clock that moves only when the test calls `advance`."""
    return FakeClock()
