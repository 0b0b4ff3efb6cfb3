"""Fixtures for the cluster port tests: a fake clock and an in-memory cluster on it."""

from __future__ import annotations

import pytest

from scheduler.cluster.sim import SimCluster
from scheduler.testing import FakeClock


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def sim(clock: FakeClock) -> SimCluster:
    return SimCluster(clock)
