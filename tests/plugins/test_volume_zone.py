"""VolumeZone: bound PVs' zone and region labels against node labels."""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from plugins.volume_zone import REASON_CONFLICT
from plugins.volume_zone import SPEC
from plugins.volume_zone import VolumeZone
from scheduler.framework import ActionType
from scheduler.framework import BatchFilterPlugin
from scheduler.framework import Code
from scheduler.framework import CycleState
from scheduler.framework import EventResource
from scheduler.framework import FilterPlugin
from scheduler.framework import Node
from scheduler.framework import Pod
from scheduler.framework import PreFilterPlugin
from scheduler.framework import QueueingHint
from scheduler.framework import Status
from scheduler.testing import FakeHandle
from scheduler.testing import build_table
from scheduler.testing import make_node
from scheduler.testing import make_pod
from scheduler.testing.plugin_harness import filter_batch_as_statuses
from scheduler.testing.plugin_harness import filter_each_node
from scheduler.testing.storage_builders import claim_volume
from scheduler.testing.storage_builders import make_pv
from scheduler.testing.storage_builders import make_pvc
from scheduler.testing.storage_builders import make_storage_class

ZONE = "topology.kubernetes.io/zone"
REGION = "topology.kubernetes.io/region"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
CONFLICT = Status.unresolvable(REASON_CONFLICT)
OK = Status()


def pv_labelled(name: str, **labels: str) -> dict[str, Any]:
    builder = make_pv(name)
    for key, value in labels.items():
        builder.label(key, value)
    return builder.dict()


def plugin(
    pvs: Sequence[Mapping[str, Any]] = (), pvcs: Sequence[Mapping[str, Any]] = ()
) -> VolumeZone:
    classes = [
        make_storage_class("wait").wait_for_first_consumer().dict(),
        make_storage_class("now").dict(),
    ]
    listers = {
        "persistentvolumes": pvs,
        "persistentvolumeclaims": pvcs,
        "storageclasses": classes,
    }
    return VolumeZone(None, FakeHandle(listers=listers))


def pod_using(*claims: str) -> Pod:
    return make_pod("p").spec(volumes=[claim_volume(c) for c in claims]).obj()


def node_labelled(name: str, **labels: str) -> Node:
    builder = make_node(name)
    for key, value in labels.items():
        builder.label(key, value)
    return builder.obj()


def test_spec() -> None:
    instance = plugin()
    assert SPEC.name == VolumeZone.name == "VolumeZone"
    assert SPEC.extension_points == ["PreFilter", "Filter"]
    assert set(SPEC.watches) == {"persistentvolumeclaims", "persistentvolumes", "storageclasses"}
    for protocol in (PreFilterPlugin, FilterPlugin, BatchFilterPlugin):
        assert isinstance(instance, protocol)


# PV labels, node labels, expected.
CASES = [
    pytest.param({ZONE: "a"}, {ZONE: "a"}, OK, id="same-zone"),
    pytest.param({ZONE: "a"}, {ZONE: "b"}, CONFLICT, id="other-zone"),
    pytest.param({ZONE: "a__b"}, {ZONE: "b"}, OK, id="multi-zone-volume"),
    pytest.param({ZONE: "a__ b"}, {ZONE: "b"}, OK, id="multi-zone-with-space"),
    pytest.param({ZONE: "a"}, {}, OK, id="node-without-topology"),
    pytest.param({ZONE: "a"}, {REGION: "r1"}, CONFLICT, id="node-lacks-the-key"),
    pytest.param({REGION: "r1"}, {REGION: "r1", ZONE: "x"}, OK, id="region"),
    pytest.param({ZONE: "a", REGION: "r1"}, {ZONE: "a", REGION: "r2"}, CONFLICT, id="both"),
    pytest.param({BETA_ZONE: "a"}, {ZONE: "a"}, OK, id="beta-volume-ga-node"),
    pytest.param({BETA_ZONE: "a"}, {ZONE: "b"}, CONFLICT, id="beta-volume-ga-node-other"),
    pytest.param({BETA_ZONE: "a"}, {BETA_ZONE: "a", ZONE: "b"}, OK, id="beta-label-first"),
    pytest.param({BETA_REGION: "r1"}, {REGION: "r1"}, OK, id="beta-region"),
    pytest.param({ZONE: "a"}, {BETA_ZONE: "a"}, CONFLICT, id="ga-volume-beta-node"),
    pytest.param({ZONE: "a__"}, {ZONE: "b"}, OK, id="malformed-label-ignored"),
]


@pytest.mark.parametrize(("pv_labels", "node_labels", "expected"), CASES)
def test_filter(pv_labels: dict[str, str], node_labels: dict[str, str], expected: Status) -> None:
    instance = plugin(
        [pv_labelled("pv", **pv_labels), pv_labelled("plain")],
        [make_pvc("data").bound_to("pv").dict(), make_pvc("other").bound_to("plain").dict()],
    )
    table = build_table([node_labelled("n", **node_labels)])
    pod = pod_using("other", "data")
    state = CycleState()
    _, status = instance.pre_filter(state, pod, table)
    if status.is_skip:
        # Only a malformed label: nothing to check.
        assert expected == OK
        return
    assert status.code is Code.SUCCESS
    assert filter_each_node(instance, state, pod, table) == [expected]
    assert filter_batch_as_statuses(instance, state, pod, table) == [expected]


@pytest.mark.parametrize(
    ("pvcs", "pvs", "expected"),
    [
        pytest.param(
            [], [], Status.unresolvable('persistentvolumeclaim "data" not found'), id="no-pvc"
        ),
        pytest.param(
            [make_pvc("data").bound_to("gone").dict()],
            [],
            Status.unresolvable('persistentvolume "gone" not found'),
            id="no-pv",
        ),
        pytest.param(
            [make_pvc("data").dict()],
            [],
            Status.unresolvable("PersistentVolumeClaim had no pv name and storageClass name"),
            id="no-class",
        ),
        pytest.param(
            [make_pvc("data").storage_class("missing").dict()],
            [],
            Status.unresolvable('storageclass.storage.k8s.io "missing" not found'),
            id="unknown-class",
        ),
        pytest.param(
            [make_pvc("data").storage_class("now").dict()],
            [],
            Status.unresolvable("PersistentVolume had no name"),
            id="unbound-immediate",
        ),
        pytest.param(
            [make_pvc("data").storage_class("wait").dict()], [], Status.skip(), id="unbound-wait"
        ),
        pytest.param(
            [make_pvc("data").bound_to("pv").dict()],
            [make_pv("pv").dict()],
            Status.skip(),
            id="no-labels",
        ),
    ],
)
def test_pre_filter(
    pvcs: list[dict[str, Any]], pvs: list[dict[str, Any]], expected: Status
) -> None:
    _, status = plugin(pvs, pvcs).pre_filter(CycleState(), pod_using("data"), build_table([]))
    assert status == expected


def test_pods_without_claims_skip() -> None:
    _, status = plugin().pre_filter(CycleState(), make_pod("p").obj(), build_table([]))
    assert status.is_skip


def _hint(resource: EventResource) -> Any:
    for entry in plugin().events_to_register():
        if entry.event.resource is resource:
            return entry.hint
    raise AssertionError(f"{resource} not registered")


def test_events_to_register() -> None:
    registered = {(e.event.resource, e.event.action) for e in plugin().events_to_register()}
    assert registered == {
        (EventResource.STORAGE_CLASS, ActionType.ADD),
        (EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
        (EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD | ActionType.UPDATE),
        (EventResource.PERSISTENT_VOLUME, ActionType.ADD | ActionType.UPDATE),
    }


def test_hints() -> None:
    pod = pod_using("data")
    added_class = _hint(EventResource.STORAGE_CLASS)
    wait = make_storage_class("w").wait_for_first_consumer().dict()
    assert added_class(pod, None, wait) is QueueingHint.QUEUE
    assert added_class(pod, None, make_storage_class("i").dict()) is QueueingHint.QUEUE_SKIP

    claim = _hint(EventResource.PERSISTENT_VOLUME_CLAIM)
    assert claim(pod, None, make_pvc("data").dict()) is QueueingHint.QUEUE
    assert claim(pod, None, make_pvc("data", "other").dict()) is QueueingHint.QUEUE_SKIP
    assert claim(pod, None, make_pvc("x").dict()) is QueueingHint.QUEUE_SKIP

    volume = _hint(EventResource.PERSISTENT_VOLUME)
    before = pv_labelled("pv", **{ZONE: "a"})
    assert volume(pod, None, before) is QueueingHint.QUEUE
    assert volume(pod, before, pv_labelled("pv", **{ZONE: "b"})) is QueueingHint.QUEUE
    relabelled = pv_labelled("pv", **{ZONE: "a", "team": "x"})
    assert volume(pod, before, relabelled) is QueueingHint.QUEUE_SKIP


LABEL_VALUES = {
    ZONE: ["a", "b", "a__b"],
    REGION: ["r1", "r2"],
    BETA_ZONE: ["a", "b"],
    BETA_REGION: ["r1"],
}
label_sets = st.dictionaries(
    st.sampled_from(sorted(LABEL_VALUES)),
    st.sampled_from(["a", "b", "r1", "r2", "a__b"]),
    max_size=3,
)


@settings(max_examples=80, deadline=None)
@given(
    volumes=st.lists(label_sets, min_size=1, max_size=3),
    nodes=st.lists(label_sets, min_size=1, max_size=8),
    data=st.data(),
)
def test_batch_and_per_node_forms_agree(
    volumes: list[dict[str, str]], nodes: list[dict[str, str]], data: st.DataObject
) -> None:
    pvs = [pv_labelled(f"pv{i}", **labels) for i, labels in enumerate(volumes)]
    pvcs = [make_pvc(f"c{i}").bound_to(f"pv{i}").dict() for i in range(len(volumes))]
    instance = plugin(pvs, pvcs)
    table = build_table([node_labelled(f"n{i}", **labels) for i, labels in enumerate(nodes)])
    pod = pod_using(*(f"c{i}" for i in range(len(volumes))))
    state = CycleState()
    _, status = instance.pre_filter(state, pod, table)
    if status.is_skip:
        return
    per_node = filter_each_node(instance, state, pod, table)
    rows = np.asarray(data.draw(st.permutations(range(table.size))), dtype=np.int64)
    assert filter_batch_as_statuses(instance, state, pod, table, rows) == [
        per_node[int(r)] for r in rows
    ]
