"""PodTopologySpread's registered events and QueueingHints."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from plugins.pod_topology_spread import PodTopologySpread
from plugins.pod_topology_spread import PodTopologySpreadArgs
from scheduler.framework import ActionType
from scheduler.framework import ClusterEvent
from scheduler.framework import EventResource
from scheduler.framework import Node
from scheduler.framework import Pod
from scheduler.framework import QueueingHint
from scheduler.framework import QueueingHintFn
from scheduler.objects.node import ZONE_LABEL
from scheduler.testing import FakeHandle
from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.plugins.topology_spread_kit import incoming
from tests.plugins.topology_spread_kit import running
from tests.plugins.topology_spread_kit import spread

QUEUE = QueueingHint.QUEUE
SKIP = QueueingHint.QUEUE_SKIP

PENDING = incoming(spread(), spread(key="rack"))
HONOURING = incoming(spread(nodeTaintsPolicy="Honor"), name="honouring")


def _plugin() -> PodTopologySpread:
    return PodTopologySpread(None, FakeHandle())


def _hints(plugin: PodTopologySpread) -> tuple[QueueingHintFn, QueueingHintFn]:
    """The pod and node hint functions, as the queue receives them."""
    hints = {r.event.resource: r.hint for r in plugin.events_to_register()}
    pod_hint, node_hint = hints[EventResource.ASSIGNED_POD], hints[EventResource.NODE]
    assert hints[EventResource.UNSCHEDULED_POD] is pod_hint
    assert pod_hint is not None
    assert node_hint is not None
    return pod_hint, node_hint


def test_registered_events() -> None:
    events = {str(e.event.resource): e.event.action for e in _plugin().events_to_register()}
    assert events == {
        "AssignedPod": ActionType.ADD
        | ActionType.UPDATE_POD_LABEL
        | ActionType.UPDATE_POD_TOLERATIONS
        | ActionType.DELETE,
        # Of an unscheduled pod, only updates: the pending pod's own, and a nominated pod's.
        "UnschedulablePod": ActionType.UPDATE_POD_LABEL | ActionType.UPDATE_POD_TOLERATIONS,
        "Node": ActionType.ADD
        | ActionType.DELETE
        | ActionType.UPDATE_NODE_LABEL
        | ActionType.UPDATE_NODE_TAINT,
    }
    assert all(e.hint is not None for e in _plugin().events_to_register())
    pod_event = _plugin().events_to_register()[0].event
    assert pod_event.matches(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE))


@dataclass
class PodCase:
    id: str
    old: Pod | None
    new: Pod | None
    expected: QueueingHint
    pending: Pod = PENDING


def _with_tolerations(pod: Pod, name: str = "incoming") -> Pod:
    raw = dict(pod.raw)
    spec = dict(raw["spec"])
    spec["tolerations"] = [{"key": "k", "operator": "Exists"}]
    raw["spec"] = spec
    return Pod.from_dict(raw)


POD_CASES = [
    PodCase("assigned matching pod added", None, running("x", "n1"), QUEUE),
    PodCase("assigned pod of another app added", None, running("x", "n1", {"app": "db"}), SKIP),
    PodCase(
        "matching pod of another namespace added",
        None,
        running("x", "n1", namespace="other"),
        SKIP,
    ),
    PodCase("unassigned matching pod added", None, make_pod("x").labels(app="web").obj(), SKIP),
    PodCase("matching pod deleted", running("x", "n1"), None, QUEUE),
    PodCase(
        "matching pod nominated to a node deleted",
        make_pod("x").labels(app="web").nominated("n1").obj(),
        None,
        QUEUE,
    ),
    PodCase("unrelated pod deleted", running("x", "n1", {"app": "db"}), None, SKIP),
    PodCase(
        "relabelled out of the selector",
        running("x", "n1"),
        running("x", "n1", {"app": "db"}),
        QUEUE,
    ),
    PodCase(
        "relabelled without crossing the selector",
        running("x", "n1", {"app": "web", "v": "1"}),
        running("x", "n1", {"app": "web", "v": "2"}),
        SKIP,
    ),
    PodCase("labels unchanged", running("x", "n1"), running("x", "n1"), SKIP),
    PodCase(
        "the pending pod got tolerations while a constraint honours taints",
        HONOURING,
        _with_tolerations(HONOURING),
        QUEUE,
        pending=HONOURING,
    ),
    PodCase(
        "the pending pod got tolerations but taints are ignored",
        PENDING,
        _with_tolerations(PENDING),
        SKIP,
    ),
]


@pytest.mark.parametrize("case", POD_CASES, ids=lambda c: c.id)
def test_pod_hint(case: PodCase) -> None:
    assert _hints(_plugin())[0](case.pending, case.old, case.new) is case.expected


def _node(zone: str | None = "a", rack: str | None = "r1", taint: bool = False) -> Node:
    builder = make_node("n1")
    if zone is not None:
        builder = builder.zone(zone)
    if rack is not None:
        builder = builder.label("rack", rack)
    if taint:
        builder = builder.taint("k", "v")
    return builder.obj()


@dataclass
class NodeCase:
    id: str
    old: Node | None
    new: Node | None
    expected: QueueingHint
    pending: Pod = PENDING


NODE_CASES = [
    NodeCase("node with every key added", None, _node(), QUEUE),
    NodeCase("node lacking a key added", None, _node(rack=None), SKIP),
    NodeCase("node with every key deleted", _node(), None, QUEUE),
    NodeCase("node lacking a key deleted", _node(zone=None), None, SKIP),
    NodeCase("node gains the missing key", _node(rack=None), _node(), QUEUE),
    NodeCase("node loses a key", _node(), _node(zone=None), QUEUE),
    NodeCase("topology value changes", _node(zone="a"), _node(zone="b"), QUEUE),
    NodeCase("unrelated label changes", _node(), _node(), SKIP),
    NodeCase("taint added, taints ignored", _node(), _node(taint=True), SKIP),
    NodeCase(
        "taint added, taints honoured",
        _node(),
        _node(taint=True),
        QUEUE,
        pending=HONOURING,
    ),
    NodeCase(
        "relabelled node still lacking a key",
        _node(rack=None, zone="a"),
        _node(rack=None, zone="b"),
        SKIP,
    ),
]


@pytest.mark.parametrize("case", NODE_CASES, ids=lambda c: c.id)
def test_node_hint(case: NodeCase) -> None:
    assert _hints(_plugin())[1](case.pending, case.old, case.new) is case.expected


def test_hints_use_default_constraints_for_pods_without_their_own() -> None:
    args = PodTopologySpreadArgs.model_validate(
        {
            "defaultingType": "List",
            "defaultConstraints": [
                {"maxSkew": 1, "topologyKey": ZONE_LABEL, "whenUnsatisfiable": "DoNotSchedule"}
            ],
        }
    )
    service = {
        "metadata": {"name": "s", "namespace": "default"},
        "spec": {"selector": {"app": "web"}},
    }
    plugin = PodTopologySpread(args, FakeHandle(listers={"services": [service]}))
    pending = incoming()
    pod_hint, node_hint = _hints(plugin)
    assert pod_hint(pending, None, running("x", "n1")) is QUEUE
    assert pod_hint(pending, None, running("x", "n1", {"app": "db"})) is SKIP
    assert node_hint(pending, None, _node(zone=None)) is SKIP
    assert node_hint(pending, None, _node(rack=None)) is QUEUE  # rack is not a default key
