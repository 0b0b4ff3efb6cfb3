"""`simulate` collects garbage as the daemon does: what loading built is frozen while pods are
scheduled, and nothing is left frozen or held off afterwards."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from scheduler.app.scenario import generate_nodes
from scheduler.app.scenario import generate_pods
from scheduler.app.simulation import simulate
from scheduler.config import default_config
from scheduler.runtime.discovery import PluginRegistry


@pytest.fixture
def collecting() -> Iterator[None]:
    was_enabled = gc.isenabled()
    gc.enable()
    yield
    if not was_enabled:
        gc.disable()


async def _simulate_watching_collection() -> list[tuple[bool, int]]:
    """Runs a small simulation; returns (collecting, frozen objects) at each progress report."""
    registry = PluginRegistry.discover()
    config, profiles = default_config(registry)
    objects = generate_nodes(3, {"cpu": "4", "memory": "8Gi", "pods": "110"}, 0)
    objects += generate_pods(6, {"cpu": "100m"}, "default-scheduler")
    seen: list[tuple[bool, int]] = []

    def progress(done: int, total: int) -> None:
        seen.append((gc.isenabled(), gc.get_freeze_count()))

    result = await simulate(objects, config, profiles, registry, seed=1, progress=progress)
    assert result.count("Scheduled") == 6
    return seen


@pytest.mark.usefixtures("collecting")
async def test_scheduling_runs_with_collection_on_and_the_loaded_cluster_frozen() -> None:
    frozen_before = gc.get_freeze_count()
    seen = await _simulate_watching_collection()
    assert seen
    assert all(enabled and frozen > frozen_before for enabled, frozen in seen)
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0


async def test_collection_held_off_by_the_caller_stays_off() -> None:
    was_enabled = gc.isenabled()
    gc.disable()
    frozen_before = gc.get_freeze_count()
    try:
        seen = await _simulate_watching_collection()
        assert all(not enabled and frozen == frozen_before for enabled, frozen in seen)
        assert not gc.isenabled()
    finally:
        if was_enabled:
            gc.enable()
