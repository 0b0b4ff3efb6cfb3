"""VolumeRestrictions: shared in-tree disks and ReadWriteOncePod claims."""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from plugins.volume_restrictions import REASON_DISK_CONFLICT
from plugins.volume_restrictions import REASON_READ_WRITE_ONCE_POD_CONFLICT
from plugins.volume_restrictions import SPEC
from plugins.volume_restrictions import VolumeRestrictions
from scheduler.framework import ActionType
from scheduler.framework import BatchFilterPlugin
from scheduler.framework import ClusterEvent
from scheduler.framework import Code
from scheduler.framework import CycleState
from scheduler.framework import EventResource
from scheduler.framework import FilterPlugin
from scheduler.framework import Pod
from scheduler.framework import PreFilterPlugin
from scheduler.framework import QueueingHint
from scheduler.framework import Status
from scheduler.runtime.discovery import PluginRegistry
from scheduler.testing import FakeHandle
from scheduler.testing import build_table
from scheduler.testing import make_node
from scheduler.testing import make_pod
from scheduler.testing.plugin_harness import filter_batch_as_statuses
from scheduler.testing.plugin_harness import filter_each_node
from scheduler.testing.storage_builders import claim_volume
from scheduler.testing.storage_builders import make_pvc

DISK = Status.unschedulable(REASON_DISK_CONFLICT)
RWOP = Status.unschedulable(REASON_READ_WRITE_ONCE_POD_CONFLICT)
OK = Status()

CLAIMS = [
    make_pvc("solo").access_modes("ReadWriteOncePod").dict(),
    make_pvc("shared").access_modes("ReadWriteOnce").dict(),
    make_pvc("solo", namespace="other").access_modes("ReadWriteOncePod").dict(),
]


def gce(pd: str, read_only: bool = False) -> dict[str, Any]:
    return {"name": f"gce-{pd}", "gcePersistentDisk": {"pdName": pd, "readOnly": read_only}}


def ebs(volume_id: str, read_only: bool = False) -> dict[str, Any]:
    return {
        "name": f"ebs-{volume_id}",
        "awsElasticBlockStore": {"volumeID": volume_id, "readOnly": read_only},
    }


def iscsi(iqn: str, read_only: bool = False) -> dict[str, Any]:
    return {"name": "iscsi", "iscsi": {"iqn": iqn, "targetPortal": "t:3260", "readOnly": read_only}}


def rbd(
    monitors: Sequence[str], image: str, pool: str | None = None, read_only: bool = False
) -> dict[str, Any]:
    source: dict[str, Any] = {"monitors": list(monitors), "image": image, "readOnly": read_only}
    if pool is not None:
        source["pool"] = pool
    return {"name": "rbd", "rbd": source}


def pod_with(name: str, *volumes: Mapping[str, Any], node: str = "", ns: str = "default") -> Pod:
    builder = make_pod(name, ns).spec(volumes=list(volumes))
    if node:
        builder.node(node)
    return builder.obj()


def plugin(claims: Sequence[Mapping[str, Any]] = CLAIMS) -> VolumeRestrictions:
    return VolumeRestrictions(None, FakeHandle(listers={"persistentvolumeclaims": claims}))


def test_spec() -> None:
    instance = plugin()
    assert SPEC.name == VolumeRestrictions.name == "VolumeRestrictions"
    assert SPEC.extension_points == ["PreFilter", "Filter"]
    assert SPEC.watches == ("persistentvolumeclaims",)
    for protocol in (PreFilterPlugin, FilterPlugin, BatchFilterPlugin):
        assert isinstance(instance, protocol)
    assert instance.pre_filter_extensions() is instance
    registry = PluginRegistry(specs=[SPEC])
    assert registry.get("VolumeRestrictions") is SPEC


@pytest.mark.parametrize(
    "volumes",
    [
        pytest.param([], id="no-volumes"),
        pytest.param([{"name": "cfg", "configMap": {"name": "c"}}], id="config-map"),
        pytest.param([claim_volume("shared")], id="rwo-claim"),
        pytest.param([claim_volume("solo")], id="rwop-claim-not-in-use"),
    ],
)
def test_pre_filter_skips_pods_with_nothing_to_check(volumes: list[dict[str, Any]]) -> None:
    table = build_table(
        [make_node("n1").obj()], [pod_with("user", claim_volume("shared"), node="n1")]
    )
    result, status = plugin().pre_filter(CycleState(), pod_with("p", *volumes), table)
    assert result is None
    assert status.is_skip


def test_pre_filter_needs_every_claim_to_exist() -> None:
    pod = pod_with("p", claim_volume("shared"), claim_volume("missing"))
    _, status = plugin().pre_filter(CycleState(), pod, build_table([]))
    assert status == Status.unresolvable('persistentvolumeclaim "missing" not found')


# (the incoming pod's volume, the volume of a pod already on the node, conflict?)
DISK_CASES = [
    pytest.param(gce("a"), gce("a"), True, id="gce-same-disk-read-write"),
    pytest.param(gce("a", True), gce("a"), True, id="gce-one-writer"),
    pytest.param(gce("a", True), gce("a", True), False, id="gce-all-read-only"),
    pytest.param(gce("a"), gce("b"), False, id="gce-other-disk"),
    pytest.param(ebs("v1", True), ebs("v1", True), True, id="ebs-never-shared"),
    pytest.param(ebs("v1"), ebs("v2"), False, id="ebs-other-volume"),
    pytest.param(iscsi("iqn.a"), iscsi("iqn.a"), True, id="iscsi-same-target"),
    pytest.param(iscsi("iqn.a", True), iscsi("iqn.a", True), False, id="iscsi-read-only"),
    pytest.param(iscsi("iqn.a"), iscsi("iqn.b"), False, id="iscsi-other-target"),
    pytest.param(rbd(["m1", "m2"], "img"), rbd(["m2"], "img"), True, id="rbd-shared-monitor"),
    pytest.param(rbd(["m1"], "img"), rbd(["m2"], "img"), False, id="rbd-no-shared-monitor"),
    pytest.param(rbd(["m1"], "img", "rbd"), rbd(["m1"], "img"), True, id="rbd-default-pool"),
    pytest.param(rbd(["m1"], "img", "p1"), rbd(["m1"], "img", "p2"), False, id="rbd-other-pool"),
    pytest.param(
        rbd(["m1"], "img", None, True), rbd(["m1"], "img", None, True), False, id="rbd-ro"
    ),
    pytest.param(gce("a"), ebs("a"), False, id="different-kinds"),
]


@pytest.mark.parametrize(("incoming", "existing", "conflict"), DISK_CASES)
def test_same_disk_conflicts(
    incoming: dict[str, Any], existing: dict[str, Any], conflict: bool
) -> None:
    nodes = [make_node("busy").obj(), make_node("empty").obj()]
    table = build_table(nodes, [pod_with("owner", existing, node="busy")])
    pod = pod_with("p", incoming)
    instance, state = plugin(), CycleState()
    _, status = instance.pre_filter(state, pod, table)
    assert status.code is Code.SUCCESS
    expected = [DISK if conflict else OK, OK]
    assert filter_each_node(instance, state, pod, table) == expected
    assert filter_batch_as_statuses(instance, state, pod, table) == expected


def test_a_read_write_once_pod_claim_in_use_rejects_every_node() -> None:
    nodes = [make_node("n1").obj(), make_node("n2").obj()]
    table = build_table(nodes, [pod_with("owner", claim_volume("solo"), node="n1")])
    pod = pod_with("p", claim_volume("solo"))
    instance, state = plugin(), CycleState()
    _, status = instance.pre_filter(state, pod, table)
    assert status.code is Code.SUCCESS
    # Unschedulable (not unresolvable): preempting the owner would help.
    assert filter_each_node(instance, state, pod, table) == [RWOP, RWOP]
    assert filter_batch_as_statuses(instance, state, pod, table) == [RWOP, RWOP]


def test_the_same_claim_name_in_another_namespace_is_no_conflict() -> None:
    table = build_table([make_node("n1").obj()], [pod_with("o", claim_volume("solo"), node="n1")])
    pod = pod_with("p", claim_volume("solo"), ns="other")
    _, status = plugin().pre_filter(CycleState(), pod, table)
    assert status.is_skip


def test_disk_conflict_is_reported_before_the_claim_conflict() -> None:
    nodes = [make_node("n1").obj(), make_node("n2").obj()]
    pods = [pod_with("o", claim_volume("solo"), gce("a"), node="n1")]
    table = build_table(nodes, pods)
    pod = pod_with("p", claim_volume("solo"), gce("a"))
    instance, state = plugin(), CycleState()
    instance.pre_filter(state, pod, table)
    assert filter_each_node(instance, state, pod, table) == [DISK, RWOP]
    assert filter_batch_as_statuses(instance, state, pod, table) == [DISK, RWOP]


def test_pre_filter_extensions_track_hypothetical_pods() -> None:
    owner = pod_with("owner", claim_volume("solo"), node="n1")
    nodes = [make_node("n1").obj()]
    table = build_table(nodes, [owner])
    pod = pod_with("p", claim_volume("solo"))
    instance, state = plugin(), CycleState()
    instance.pre_filter(state, pod, table)
    info = table.node_infos[0]
    dry_run = state.clone()
    assert instance.remove_pod(dry_run, pod, owner, info).is_success
    assert instance.filter(dry_run, pod, info) == OK, "evicting the owner frees the claim"
    assert instance.filter(state, pod, info) == RWOP, "the clone did not touch the original"
    assert instance.add_pod(dry_run, pod, owner, info).is_success
    assert instance.filter(dry_run, pod, info) == RWOP
    assert instance.add_pod(CycleState(), pod, owner, info).code is Code.ERROR


def test_events_to_register() -> None:
    events = {(e.event.resource, e.event.action): e.hint for e in plugin().events_to_register()}
    assert set(events) == {
        (EventResource.ASSIGNED_POD, ActionType.DELETE),
        (EventResource.NODE, ActionType.ADD),
        (EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD),
    }
    assert events[(EventResource.NODE, ActionType.ADD)] is None
    deleted = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE)
    registered = [e for e in plugin().events_to_register() if e.event.matches(deleted)]
    assert len(registered) == 1


def _hint(resource: EventResource, action: ActionType) -> Any:
    for entry in plugin().events_to_register():
        if entry.event.resource is resource and entry.event.action == action:
            return entry.hint
    raise AssertionError("not registered")


@pytest.mark.parametrize(
    ("pending", "deleted", "expected"),
    [
        pytest.param(
            pod_with("p", gce("a")), pod_with("d", gce("a"), node="n1"), True, id="same-disk"
        ),
        pytest.param(
            pod_with("p", gce("a")), pod_with("d", gce("b"), node="n1"), False, id="other-disk"
        ),
        pytest.param(
            pod_with("p", gce("a")),
            pod_with("d", gce("a"), node="n1", ns="other"),
            False,
            id="other-namespace",
        ),
        pytest.param(
            pod_with("p", claim_volume("solo")),
            pod_with("d", claim_volume("solo"), node="n1"),
            True,
            id="same-claim",
        ),
        pytest.param(
            pod_with("p", claim_volume("solo")),
            pod_with("d", claim_volume("shared"), node="n1"),
            False,
            id="other-claim",
        ),
    ],
)
def test_assigned_pod_delete_hint(pending: Pod, deleted: Pod, expected: bool) -> None:
    hint = _hint(EventResource.ASSIGNED_POD, ActionType.DELETE)
    want = QueueingHint.QUEUE if expected else QueueingHint.QUEUE_SKIP
    assert hint(pending, deleted, None) is want


def test_claim_added_hint() -> None:
    hint = _hint(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD)
    pod = pod_with("p", claim_volume("solo"))
    assert hint(pod, None, make_pvc("solo").dict()) is QueueingHint.QUEUE
    assert hint(pod, None, make_pvc("solo", "other").dict()) is QueueingHint.QUEUE_SKIP
    assert hint(pod, None, make_pvc("unrelated").dict()) is QueueingHint.QUEUE_SKIP
    with pytest.raises(TypeError):
        hint(pod, None, object())


VOLUME_POOL = [gce("a"), gce("a", True), ebs("v1"), iscsi("iqn.a", True), rbd(["m1"], "img")]
CLAIM_POOL = [claim_volume("solo"), claim_volume("shared")]


@settings(max_examples=60, deadline=None)
@given(
    on_nodes=st.lists(
        st.lists(st.sampled_from(VOLUME_POOL + CLAIM_POOL), max_size=3, unique_by=str),
        min_size=1,
        max_size=6,
    ),
    wanted=st.lists(st.sampled_from(VOLUME_POOL + CLAIM_POOL), max_size=3, unique_by=str),
    data=st.data(),
)
def test_batch_and_per_node_forms_agree(
    on_nodes: list[list[dict[str, Any]]], wanted: list[dict[str, Any]], data: st.DataObject
) -> None:
    nodes = [make_node(f"n{i}").obj() for i in range(len(on_nodes))]
    pods = [pod_with(f"p{i}", *vols, node=f"n{i}") for i, vols in enumerate(on_nodes)]
    table = build_table(nodes, pods)
    pod = pod_with("incoming", *wanted)
    instance, state = plugin(), CycleState()
    _, status = instance.pre_filter(state, pod, table)
    if status.is_skip:
        return
    per_node = filter_each_node(instance, state, pod, table)
    rows = np.asarray(data.draw(st.permutations(range(table.size))), dtype=np.int64)
    assert filter_batch_as_statuses(instance, state, pod, table, rows) == [
        per_node[int(r)] for r in rows
    ]
