"""Reading an object's metadata in the simulated cluster's controllers."""

from __future__ import annotations

from scheduler.cluster.sim.meta import metadata_of


def test_metadata_of_an_object() -> None:
    assert metadata_of({"metadata": {"name": "a", "namespace": "ns"}}) == {
        "name": "a",
        "namespace": "ns",
    }


def test_an_object_without_metadata_reads_as_empty() -> None:
    assert metadata_of({"spec": {}}) == {}
    assert metadata_of({"metadata": None}) == {}
