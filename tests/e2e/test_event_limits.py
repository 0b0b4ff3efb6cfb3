"""The API server's limits on an Event, as the simulated cluster enforces them: the same
bodies are refused with the same answer by both, and a note the recorder cut is accepted."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.cluster.kube import KubeClusterClient
from scheduler.cluster.sim import SimCluster
from scheduler.core.event_recorder import truncate_note
from scheduler.framework.errors import APIError
from scheduler.testing import FakeClock

pytestmark = pytest.mark.e2e

# Fewer than 1024 characters, more than 1024 bytes.
LONG_NOTE = "ノードの準備ができていません" * 30

BREAKS = [
    pytest.param("note", LONG_NOTE, id="note-over-1024-bytes"),
    pytest.param("reason", "R" * 129, id="reason-over-128"),
    pytest.param("action", "", id="action-missing"),
]


def _event(namespace: str, name: str, **fields: str) -> dict[str, Any]:
    return {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": namespace},
        "eventTime": "2026-01-01T00:00:00.000000Z",
        "reportingController": "kube-pyscheduler",
        "reportingInstance": "kube-pyscheduler-host",
        "action": "Scheduling",
        "reason": "FailedScheduling",
        "type": "Warning",
        "regarding": {"apiVersion": "v1", "kind": "Pod", "namespace": namespace, "name": "p"},
        "note": "0/1 nodes are available",
        **fields,
    }


async def _refusal(api: KubeClusterClient | SimCluster, event: dict[str, Any]) -> tuple[int, str]:
    with pytest.raises(APIError) as refused:
        await api.create_event(event)
    return refused.value.status, refused.value.text


@pytest.mark.parametrize(("field", "value"), BREAKS)
async def test_the_simulated_cluster_refuses_what_the_api_server_refuses_in_its_words(
    kube: KubeClusterClient, namespace: str, field: str, value: str
) -> None:
    event = _event(namespace, f"bad-{field}", **{field: value})
    sim = SimCluster(FakeClock())
    real = await _refusal(kube, event)
    assert real[0] == 422
    assert await _refusal(sim, event) == real


async def test_a_note_cut_by_the_recorder_is_accepted(
    kube: KubeClusterClient, namespace: str
) -> None:
    note = truncate_note(LONG_NOTE)
    await kube.create_event(_event(namespace, "cut", note=note))
    [stored] = (await kube.list("events", namespace=namespace)).items
    assert stored["note"] == note
