"""The differential suite needs the same pinned binaries as the end-to-end tests."""

from __future__ import annotations

import pytest

from tests.e2e.binaries import ControlPlaneBinaries
from tests.e2e.binaries import binaries_or_skip


@pytest.fixture(scope="session")
def e2e_binaries() -> ControlPlaneBinaries:
    return binaries_or_skip()
