"""A plugin that raises, returns the wrong type or scores out of range never stops the scheduler.

Each case runs the real scheduler on the in-memory cluster with the `Faulty` plugin enabled at
every extension point. The faulting pod must fail with an Error naming the plugin (Event,
PodScheduled condition, metric), a healthy pod must still be bound, and once the fault stops
the faulting pod must be retried after backoff and bound.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.fault_plugin import FAILING_POINTS
from tests.fault_plugin import NAME
from tests.fault_plugin import SPEC
from tests.fault_plugin import fault_annotations
from tests.fault_plugin import profile_plugins
from tests.integration.harness import Harness

# Longer than the maximum error backoff (10 s by default).
PAST_BACKOFF = 11.0


def _config() -> dict[str, Any]:
    return {"profiles": [{"schedulerName": "default-scheduler", "plugins": profile_plugins()}]}


def _pod(name: str, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    pod = make_pod(name).req(cpu="100m").dict()
    if annotations:
        pod["metadata"]["annotations"] = annotations
    return pod


async def _start(h: Harness, faulty_annotations: dict[str, str]) -> None:
    h.create([make_node(f"n{i}").capacity(cpu="4", memory="8Gi", pods="10").dict() for i in (1, 2)])
    h.create([_pod("faulty", faulty_annotations), _pod("fine")])
    await h.schedule_active()


async def _stop_fault_and_retry(h: Harness) -> None:
    pod = copy.deepcopy(h.pod("default", "faulty"))
    pod["metadata"].pop("annotations", None)
    await h.sim.update("pods", pod)
    await h.quiesce()
    h.clock.advance(PAST_BACKOFF)
    h.scheduler.queue.flush_backoff_completed()
    await h.schedule_active()


def _condition(h: Harness) -> dict[str, Any]:
    conditions = (h.pod("default", "faulty").get("status") or {}).get("conditions") or []
    return next(c for c in conditions if c["type"] == "PodScheduled")


def _error_attempts(h: Harness) -> float:
    value = h.scheduler.metrics.registry.get_sample_value(
        "scheduler_schedule_attempts_total",
        {"result": "error", "profile": "default-scheduler"},
    )
    return value or 0.0


# How upstream's Error messages name the extension points whose name they do not spell out.
POINT_WORDS = {"Filter": "filter plugin", "NormalizeScore": "Normalize on Score"}

# Extension points where a fault fails the attempt, and how the plugin misbehaves there.
FAILING = [
    *((point, kind) for point in FAILING_POINTS for kind in ("raise", "wrong-type")),
    ("Score", "score-150"),
    ("Score", "nan"),
]


@pytest.mark.parametrize(("point", "kind"), FAILING, ids=[f"{p}-{k}" for p, k in FAILING])
async def test_a_fault_fails_the_pod_with_an_error_and_the_pod_is_bound_once_it_stops(
    point: str, kind: str
) -> None:
    async with Harness(_config(), extra_plugins=[SPEC]) as h:
        await _start(h, fault_annotations(point, kind))

        assert h.node_of("default", "fine") is not None
        assert h.node_of("default", "faulty") is None
        notes = h.event_notes("default", "faulty", "FailedScheduling")
        assert len(notes) == 1
        assert NAME in notes[0]
        if kind == "score-150":
            assert "invalid score 150" in notes[0]
        elif kind == "nan":
            assert "nan" in notes[0]
        else:
            assert POINT_WORDS.get(point, point) in notes[0]
        condition = _condition(h)
        assert condition["status"] == "False"
        assert condition["reason"] == "SchedulerError"
        assert NAME in condition["message"]
        assert _error_attempts(h) == 1
        # Error backoff; after PostFilter, Filter's rejections decide which events retry it.
        expected_queue = "unschedulable" if point == "PostFilter" else "backoff"
        assert h.scheduler.queue.locate("default/faulty") == expected_queue
        # Nothing the attempt held is left behind.
        assert not h.scheduler.cache.is_assumed("default/faulty")

        await _stop_fault_and_retry(h)
        assert h.node_of("default", "faulty") is not None


@pytest.mark.parametrize("kind", ["raise", "wrong-type"])
async def test_a_failing_pre_enqueue_holds_the_pod_until_the_fault_stops(kind: str) -> None:
    async with Harness(_config(), extra_plugins=[SPEC]) as h:
        await _start(h, fault_annotations("PreEnqueue", kind))
        assert h.node_of("default", "fine") is not None
        assert h.node_of("default", "faulty") is None
        await _stop_fault_and_retry(h)
        assert h.node_of("default", "faulty") is not None


@pytest.mark.parametrize("kind", ["raise", "wrong-type"])
async def test_a_failing_post_bind_is_only_logged(kind: str) -> None:
    async with Harness(_config(), extra_plugins=[SPEC]) as h:
        await _start(h, fault_annotations("PostBind", kind))
        assert h.node_of("default", "faulty") is not None
        assert h.event_notes("default", "faulty", "FailedScheduling") == []


@pytest.mark.parametrize("kind", ["raise", "wrong-type"])
async def test_a_failing_queueing_hint_still_requeues_the_pod(kind: str) -> None:
    async with Harness(_config(), extra_plugins=[SPEC]) as h:
        await _start(h, fault_annotations("QueueingHint", kind))
        assert h.node_of("default", "faulty") is None
        assert h.scheduler.queue.locate("default/faulty") == "unschedulable"
        # A node arrives: the hint fails, which must count as "queue", not "skip".
        h.create([make_node("n3").capacity(cpu="4", memory="8Gi", pods="10").dict()])
        await h.quiesce()
        assert h.scheduler.queue.locate("default/faulty") in ("backoff", "active")
