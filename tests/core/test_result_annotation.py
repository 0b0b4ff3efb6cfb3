"""The opt-in plugin-result annotation: written on failure, bounded, removed once bound."""

from __future__ import annotations

import json

from scheduler.core.result_annotation import ANNOTATION
from scheduler.core.result_annotation import ResultAnnotations
from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.integration.harness import Harness

PAST_BACKOFF = 11.0


async def test_a_failure_is_recorded_on_the_pod_and_cleared_when_it_binds() -> None:
    async with Harness() as h:
        h.scheduler.result_annotations = ResultAnnotations(h.sim, h.scheduler.dispatcher)
        h.create(
            [
                make_node("small").capacity(cpu="1", pods=110).dict(),
                make_node("tainted").capacity(cpu="4", pods=110).taint("dedicated", "gpu").dict(),
                make_pod("p").req(cpu="2").dict(),
            ]
        )
        await h.schedule_active()
        [note] = h.event_notes("default", "p", "FailedScheduling")
        recorded = json.loads(h.pod("default", "p")["metadata"]["annotations"][ANNOTATION])
        assert recorded["message"] == note
        assert recorded["plugins"] == {
            "NodeResourcesFit": {"Insufficient cpu": 1},
            "TaintToleration": {"node(s) had untolerated taint(s)": 1},
        }
        assert recorded["nodes"] == {
            "small": "NodeResourcesFit: Insufficient cpu",
            "tainted": "TaintToleration: node(s) had untolerated taint(s)",
        }
        assert recorded["omittedNodes"] == 0
        # Writing the annotation is an update of the pod, but it brings no retry by itself.
        assert h.scheduler.queue.pending_counts().get("active", 0) == 0
        h.create([make_node("roomy").capacity(cpu="4", pods=110).dict()])
        await h.quiesce()
        h.clock.advance(PAST_BACKOFF)
        h.scheduler.queue.flush_backoff_completed()
        await h.schedule_active()
        assert h.node_of("default", "p") == "roomy"
        await h.quiesce()
        assert ANNOTATION not in (h.pod("default", "p")["metadata"].get("annotations") or {})


async def test_the_annotation_stays_within_its_bound() -> None:
    limit = 1024
    async with Harness() as h:
        h.scheduler.result_annotations = ResultAnnotations(h.sim, h.scheduler.dispatcher, limit)
        nodes = [make_node(f"node-{i:03d}").capacity(cpu="1", pods=110).dict() for i in range(300)]
        h.create([*nodes, make_pod("p").req(cpu="2").dict()])
        await h.schedule_active()
        text = h.pod("default", "p")["metadata"]["annotations"][ANNOTATION]
    assert len(text.encode()) <= limit
    recorded = json.loads(text)
    assert recorded["plugins"] == {"NodeResourcesFit": {"Insufficient cpu": 300}}
    assert 0 < len(recorded["nodes"]) < 300
    assert len(recorded["nodes"]) + recorded["omittedNodes"] == 300
