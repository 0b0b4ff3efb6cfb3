"""SchedulingGates: gated pods stay out of the active queue until their gates are gone."""

from __future__ import annotations

import pytest

from plugins.scheduling_gates import SPEC
from plugins.scheduling_gates import SchedulingGates
from scheduler.framework import ActionType
from scheduler.framework import ClusterEvent
from scheduler.framework import Code
from scheduler.framework import EnqueueExtensions
from scheduler.framework import EventResource
from scheduler.framework import Pod
from scheduler.framework import PreEnqueuePlugin
from scheduler.framework import QueueingHint
from scheduler.testing import FakeHandle
from scheduler.testing import make_pod

PLUGIN = SchedulingGates(None, FakeHandle())


def test_spec() -> None:
    assert SPEC.name == SchedulingGates.name == "SchedulingGates"
    assert SPEC.extension_points == ["PreEnqueue"]
    assert isinstance(PLUGIN, PreEnqueuePlugin)
    assert isinstance(PLUGIN, EnqueueExtensions)


@pytest.mark.parametrize(
    ("pod", "code", "message"),
    [
        (make_pod("free").obj(), Code.SUCCESS, ""),
        (
            make_pod("one").scheduling_gate("example.com/quota").obj(),
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            "waiting for scheduling gates: [example.com/quota]",
        ),
        (
            make_pod("two").scheduling_gate("g1").scheduling_gate("g2").obj(),
            Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
            "waiting for scheduling gates: [g1 g2]",
        ),
    ],
    ids=["no-gates", "one-gate", "gates-in-order"],
)
def test_pre_enqueue(pod: Pod, code: Code, message: str) -> None:
    status = PLUGIN.pre_enqueue(pod)
    assert status.code is code
    assert status.message() == message
    assert status.plugin == ""


def test_requeued_only_by_its_own_gate_removal() -> None:
    (registration,) = PLUGIN.events_to_register()
    assert registration.event == ClusterEvent(
        EventResource.POD, ActionType.UPDATE_POD_SCHEDULING_GATES_ELIMINATED
    )
    assert registration.hint is not None
    gated = make_pod("gated").uid("u1").scheduling_gate("g").obj()
    released = make_pod("gated").uid("u1").obj()
    other = make_pod("other").uid("u2").obj()
    assert registration.hint(gated, gated, released) is QueueingHint.QUEUE
    assert registration.hint(gated, other, other) is QueueingHint.QUEUE_SKIP
