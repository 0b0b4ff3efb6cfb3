"""NodeVolumeLimits: CSI attach limits from CSINode, counting the volumes of the node's pods
and those VolumeAttachments still hold."""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from plugins.node_volume_limits import REASON_MAX_VOLUME_COUNT
from plugins.node_volume_limits import SPEC
from plugins.node_volume_limits import NodeVolumeLimits
from scheduler.framework import ActionType
from scheduler.framework import BatchFilterPlugin
from scheduler.framework import Code
from scheduler.framework import CycleState
from scheduler.framework import EventResource
from scheduler.framework import FilterPlugin
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
from scheduler.testing.storage_builders import ephemeral_volume
from scheduler.testing.storage_builders import make_csi_driver
from scheduler.testing.storage_builders import make_csi_node
from scheduler.testing.storage_builders import make_pv
from scheduler.testing.storage_builders import make_pvc
from scheduler.testing.storage_builders import make_storage_class
from scheduler.testing.storage_builders import make_volume_attachment

EBS = "ebs.csi.aws.com"
GCE = "pd.csi.storage.gke.io"
TOO_MANY = Status.unschedulable(REASON_MAX_VOLUME_COUNT)
OK = Status()

# Five bound EBS claims (vol-0 .. vol-4), one bound GCE claim, one unbound EBS-class claim.
PVCS = [
    *(make_pvc(f"ebs-{i}").bound_to(f"pv-ebs-{i}").dict() for i in range(5)),
    make_pvc("gce-0").bound_to("pv-gce-0").dict(),
    make_pvc("unbound").storage_class("ebs-class").dict(),
    make_pvc("no-class").dict(),
    make_pvc("pre-bound-missing-pv").volume_name("nowhere").storage_class("ebs-class").dict(),
]
PVS = [
    *(make_pv(f"pv-ebs-{i}").csi(EBS, f"vol-{i}").dict() for i in range(5)),
    make_pv("pv-gce-0").csi(GCE, "disk-0").dict(),
]
CLASSES = [make_storage_class("ebs-class", EBS).dict()]


LISTERS: dict[str, Any] = {
    "persistentvolumeclaims": PVCS,
    "persistentvolumes": PVS,
    "storageclasses": CLASSES,
}


def handle(csi_nodes: Sequence[Mapping[str, Any]] = (), **extra: Any) -> FakeHandle:
    return FakeHandle(listers={**LISTERS, "csinodes": csi_nodes, **extra})


def pod_using(name: str, *claims: str, node: str = "") -> Pod:
    builder = make_pod(name).spec(volumes=[claim_volume(c) for c in claims])
    if node:
        builder.node(node)
    return builder.obj()


def run(
    plugin: NodeVolumeLimits, pod: Pod, nodes: Sequence[Any], pods: Sequence[Pod]
) -> list[Status]:
    table = build_table(nodes, pods)
    state = CycleState()
    _, status = plugin.pre_filter(state, pod, table)
    assert status.code is Code.SUCCESS
    per_node = filter_each_node(plugin, state, pod, table)
    assert filter_batch_as_statuses(plugin, state, pod, table) == per_node
    return per_node


def test_spec() -> None:
    plugin = NodeVolumeLimits(None, handle())
    assert SPEC.name == NodeVolumeLimits.name == "NodeVolumeLimits"
    assert SPEC.extension_points == ["PreFilter", "Filter"]
    assert set(SPEC.watches) == {
        "persistentvolumeclaims",
        "persistentvolumes",
        "storageclasses",
        "csinodes",
        "csidrivers",
        "volumeattachments",
    }
    for protocol in (PreFilterPlugin, FilterPlugin, BatchFilterPlugin):
        assert isinstance(plugin, protocol)


def test_pods_without_claims_skip() -> None:
    plugin = NodeVolumeLimits(None, handle())
    inline = make_pod("p").spec(volumes=[{"name": "e", "emptyDir": {}}]).obj()
    for pod in (make_pod("none").obj(), inline):
        assert plugin.pre_filter(CycleState(), pod, build_table([]))[1].is_skip


@pytest.mark.parametrize(
    ("limit", "attached", "wanted", "expected"),
    [
        pytest.param(3, ["ebs-0", "ebs-1"], ["ebs-2"], OK, id="fits-exactly"),
        pytest.param(2, ["ebs-0", "ebs-1"], ["ebs-2"], TOO_MANY, id="one-too-many"),
        pytest.param(2, ["ebs-0", "ebs-1"], ["ebs-1"], OK, id="shared-volume-counts-once"),
        pytest.param(2, ["ebs-0"], ["ebs-1", "ebs-1"], OK, id="same-claim-twice-in-pod"),
        pytest.param(1, [], ["ebs-0", "ebs-1"], TOO_MANY, id="pod-alone-exceeds"),
        pytest.param(1, ["gce-0"], ["ebs-0"], OK, id="other-driver-not-counted"),
        pytest.param(2, ["ebs-0", "ebs-1"], ["unbound"], TOO_MANY, id="unbound-via-class"),
        pytest.param(2, ["ebs-0", "ebs-1"], ["no-class"], OK, id="unbound-without-class"),
        pytest.param(2, ["ebs-0", "ebs-1"], ["pre-bound-missing-pv"], TOO_MANY, id="pv-missing"),
        pytest.param(None, ["ebs-0", "ebs-1"], ["ebs-2"], OK, id="driver-without-limit"),
    ],
)
def test_csi_node_limits(
    limit: int | None, attached: list[str], wanted: list[str], expected: Status
) -> None:
    plugin = NodeVolumeLimits(None, handle([make_csi_node("n1", **{EBS: limit, GCE: 1})]))
    existing = [pod_using(f"e{i}", claim, node="n1") for i, claim in enumerate(attached)]
    assert run(plugin, pod_using("p", *wanted), [make_node("n1").obj()], existing) == [expected]


def test_limits_are_per_node() -> None:
    csi_nodes = [make_csi_node("small", **{EBS: 1}), make_csi_node("big", **{EBS: 10})]
    plugin = NodeVolumeLimits(None, handle(csi_nodes))
    nodes = [make_node(n).obj() for n in ("small", "big", "no-csinode")]
    existing = [pod_using(f"e-{n.name}", "ebs-0", node=n.name) for n in nodes]
    assert run(plugin, pod_using("p", "ebs-1"), nodes, existing) == [TOO_MANY, OK, OK]


def test_node_allocatable_no_longer_limits_anything() -> None:
    """Since v1.36 upstream reads limits from the CSINode only."""
    node = make_node("n1").allocatable(**{f"attachable-volumes-csi-{EBS}": 1}).obj()
    plugin = NodeVolumeLimits(None, handle())
    assert run(plugin, pod_using("p", "ebs-1"), [node], [pod_using("e", "ebs-0", node="n1")]) == [
        OK
    ]


@pytest.mark.parametrize(
    ("attachments", "wanted", "expected"),
    [
        pytest.param([("pv-ebs-1", EBS, "n1")], "ebs-2", TOO_MANY, id="held-by-attachment"),
        pytest.param([("pv-ebs-0", EBS, "n1")], "ebs-2", OK, id="same-volume-as-a-pod"),
        pytest.param([("pv-ebs-1", EBS, "n2")], "ebs-2", OK, id="other-node"),
        pytest.param([("pv-gce-0", GCE, "n1")], "ebs-2", OK, id="other-driver"),
        pytest.param([("pv-gone", EBS, "n1")], "ebs-2", OK, id="pv-gone"),
        pytest.param([("", EBS, "n1")], "ebs-2", OK, id="no-pv-named"),
        pytest.param([("pv-ebs-1", "", "n1")], "ebs-2", OK, id="no-attacher"),
        # As upstream: only a pod's use makes the new pod's volume count once; a volume still
        # attached only by its attachment is counted for the attachment and for the pod.
        pytest.param([("pv-ebs-1", EBS, "n1")], "ebs-1", TOO_MANY, id="pods-own-volume"),
    ],
)
def test_volume_attachments_hold_slots(
    attachments: list[tuple[str, str, str]], wanted: str, expected: Status
) -> None:
    """n1 allows two EBS volumes and runs a pod using ebs-0."""
    held = [
        make_volume_attachment(f"va-{i}", attacher, node, pv)
        for i, (pv, attacher, node) in enumerate(attachments)
    ]
    csi = [make_csi_node("n1", **{EBS: 2, GCE: 1})]
    plugin = NodeVolumeLimits(None, handle(csi, volumeattachments=held))
    existing = [pod_using("e", "ebs-0", node="n1")]
    assert run(plugin, pod_using("p", wanted), [make_node("n1").obj()], existing) == [expected]


@pytest.mark.parametrize(
    ("gate", "drivers", "installed", "expected"),
    [
        pytest.param(True, [make_csi_driver(EBS, required_on_node=True)], False, "missing"),
        pytest.param(True, [make_csi_driver(EBS, required_on_node=True)], True, "ok"),
        pytest.param(True, [make_csi_driver(EBS)], False, "ok", id="driver-does-not-ask"),
        pytest.param(True, [], False, "ok", id="no-csidriver"),
        pytest.param(False, [make_csi_driver(EBS, required_on_node=True)], False, "ok"),
    ],
)
def test_volume_limit_scaling_keeps_pods_off_nodes_without_a_required_driver(
    gate: bool, drivers: list[dict[str, Any]], installed: bool, expected: str
) -> None:
    csi = [make_csi_node("n1", **({EBS: None} if installed else {GCE: 1}))]
    listers = {**LISTERS, "csinodes": csi, "csidrivers": drivers}
    fake = FakeHandle(listers=listers, gates={"VolumeLimitScaling": gate})
    [status] = run(
        NodeVolumeLimits(None, fake), pod_using("p", "ebs-0"), [make_node("n1").obj()], []
    )
    missing = Status.unschedulable(f"{EBS} CSI driver is not installed on the node")
    assert status == (missing if expected == "missing" else OK)


def test_a_missing_claim_is_unresolvable_everywhere() -> None:
    plugin = NodeVolumeLimits(None, handle([make_csi_node("n1", **{EBS: 5})]))
    nodes = [make_node("n1").obj(), make_node("n2").obj()]
    expected = Status.unresolvable(
        'looking up PVC default/gone: persistentvolumeclaim "gone" not found'
    )
    assert run(plugin, pod_using("p", "ebs-0", "gone"), nodes, []) == [expected, expected]


def test_existing_pods_whose_claims_are_gone_are_not_counted() -> None:
    plugin = NodeVolumeLimits(None, handle([make_csi_node("n1", **{EBS: 1})]))
    existing = [pod_using("e", "deleted-claim", node="n1")]
    assert run(plugin, pod_using("p", "ebs-0"), [make_node("n1").obj()], existing) == [OK]


def test_ephemeral_volume_claims_must_belong_to_the_pod() -> None:
    pod = make_pod("app").uid("uid-app").spec(volumes=[ephemeral_volume("scratch")]).obj()
    owned = make_pvc("app-scratch").bound_to("pv-ebs-3").owned_by("uid-app").dict()
    foreign = make_pvc("app-scratch").bound_to("pv-ebs-3").owned_by("someone-else").dict()
    nodes = [make_node("n1").obj()]
    csi = [make_csi_node("n1", **{EBS: 0})]
    plugin = NodeVolumeLimits(None, handle(csi, persistentvolumeclaims=[owned]))
    assert run(plugin, pod, nodes, []) == [TOO_MANY]
    plugin = NodeVolumeLimits(None, handle(csi, persistentvolumeclaims=[foreign]))
    statuses = run(plugin, pod, nodes, [])
    assert statuses[0].code is Code.ERROR
    assert statuses[0].message() == (
        "PVC default/app-scratch was not created for pod default/app (pod is not owner)"
    )


def _hint(resource: EventResource, action: ActionType) -> Any:
    for entry in NodeVolumeLimits(None, handle()).events_to_register():
        if entry.event.resource is resource and entry.event.action == action:
            return entry.hint
    raise AssertionError(f"{resource} {action} not registered")


def test_events_to_register() -> None:
    registered = {
        (e.event.resource, e.event.action)
        for e in NodeVolumeLimits(None, handle()).events_to_register()
    }
    assert registered == {
        (EventResource.CSI_NODE, ActionType.ADD),
        (EventResource.CSI_NODE, ActionType.UPDATE),
        (EventResource.ASSIGNED_POD, ActionType.DELETE),
        (EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD),
        (EventResource.VOLUME_ATTACHMENT, ActionType.DELETE),
    }
    assert _hint(EventResource.CSI_NODE, ActionType.ADD) is None


def test_hints() -> None:
    pending = pod_using("p", "ebs-0")
    deleted = _hint(EventResource.ASSIGNED_POD, ActionType.DELETE)
    assert deleted(pending, pod_using("d", "gce-0", node="n1"), None) is QueueingHint.QUEUE
    assert deleted(pending, make_pod("d").node("n1").obj(), None) is QueueingHint.QUEUE_SKIP
    assert deleted(pending, pod_using("d", "gce-0"), None) is QueueingHint.QUEUE_SKIP
    nominated = make_pod("d").nominated("n1").spec(volumes=[claim_volume("gce-0")]).obj()
    assert deleted(pending, nominated, None) is QueueingHint.QUEUE

    added = _hint(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD)
    assert added(pending, None, make_pvc("ebs-0").dict()) is QueueingHint.QUEUE
    assert added(pending, None, make_pvc("ebs-0", "other").dict()) is QueueingHint.QUEUE_SKIP
    assert added(pending, None, make_pvc("x").dict()) is QueueingHint.QUEUE_SKIP

    updated = _hint(EventResource.CSI_NODE, ActionType.UPDATE)
    old = make_csi_node("n1", **{EBS: 2})
    assert updated(pending, old, make_csi_node("n1", **{EBS: 3})) is QueueingHint.QUEUE
    assert updated(pending, old, make_csi_node("n1", **{EBS: 2})) is QueueingHint.QUEUE_SKIP
    assert updated(pending, old, make_csi_node("n1", **{EBS: 1})) is QueueingHint.QUEUE_SKIP
    # As upstream judges it: only a count that grew, a new driver's from 0, requeues.
    assert updated(pending, old, make_csi_node("n1", **{EBS: 2, GCE: 1})) is QueueingHint.QUEUE
    assert updated(pending, old, make_csi_node("n1", **{EBS: None})) is QueueingHint.QUEUE_SKIP

    detached = _hint(EventResource.VOLUME_ATTACHMENT, ActionType.DELETE)
    attachment = make_volume_attachment("va", EBS, "n1", "pv-ebs-0")
    assert detached(pending, attachment, None) is QueueingHint.QUEUE
    ephemeral_only = make_pod("e").spec(volumes=[ephemeral_volume("scratch")]).obj()
    assert detached(ephemeral_only, attachment, None) is QueueingHint.QUEUE_SKIP


CLAIM_NAMES = ["ebs-0", "ebs-1", "ebs-2", "ebs-3", "gce-0", "unbound", "no-class"]


@settings(max_examples=60, deadline=None)
@given(
    attached=st.lists(st.lists(st.sampled_from(CLAIM_NAMES), max_size=3), min_size=1, max_size=5),
    limits=st.lists(st.one_of(st.none(), st.integers(0, 4)), min_size=5, max_size=5),
    wanted=st.lists(st.sampled_from(CLAIM_NAMES), min_size=1, max_size=3),
    data=st.data(),
)
def test_batch_and_per_node_forms_agree(
    attached: list[list[str]], limits: list[int | None], wanted: list[str], data: st.DataObject
) -> None:
    csi_nodes = [make_csi_node(f"n{i}", **{EBS: limits[i]}) for i in range(len(attached))]
    plugin = NodeVolumeLimits(None, handle(csi_nodes))
    nodes = [make_node(f"n{i}").obj() for i in range(len(attached))]
    pods = [pod_using(f"e{i}", *claims, node=f"n{i}") for i, claims in enumerate(attached)]
    table = build_table(nodes, pods)
    pod = pod_using("incoming", *wanted)
    state = CycleState()
    plugin.pre_filter(state, pod, table)
    per_node = filter_each_node(plugin, state, pod, table)
    rows = np.asarray(data.draw(st.permutations(range(table.size))), dtype=np.int64)
    assert filter_batch_as_statuses(plugin, state, pod, table, rows) == [
        per_node[int(r)] for r in rows
    ]


# ---- in-tree volumes, counted as the CSI volumes migration makes of them -------------------

IN_TREE_PVC = make_pvc("legacy").bound_to("pv-legacy").dict()
IN_TREE_PV = {
    **make_pv("pv-legacy").claim("legacy").dict(),
    "spec": {"awsElasticBlockStore": {"volumeID": "aws://us-east-1a/vol-0"}},
}
AWS_CLASS = make_storage_class("aws-class", "kubernetes.io/aws-ebs").dict()
UNBOUND_AWS = make_pvc("unbound-aws").storage_class("aws-class").dict()


def _inline_ebs(pod: str, volume_id: str, node: str = "") -> Pod:
    builder = make_pod(pod).spec(
        volumes=[{"name": "disk", "awsElasticBlockStore": {"volumeID": volume_id}}]
    )
    if node:
        builder.node(node)
    return builder.obj()


def _legacy_handle(**csi_nodes: int) -> FakeHandle:
    return FakeHandle(
        listers={
            **LISTERS,
            "persistentvolumeclaims": [*PVCS, IN_TREE_PVC, UNBOUND_AWS],
            "persistentvolumes": [*PVS, IN_TREE_PV],
            "storageclasses": [*CLASSES, AWS_CLASS],
            "csinodes": [make_csi_node(n, **{EBS: c}) for n, c in csi_nodes.items()],
        }
    )


# An existing pod on n1 using the CSI volume vol-1 of EBS, or the same disk inline.
ON_N1_CSI = pod_using("e", "ebs-1", node="n1")
ON_N1_INLINE = _inline_ebs("e", "vol-1", node="n1")


@pytest.mark.parametrize(
    ("existing", "incoming", "expected"),
    [
        pytest.param(ON_N1_CSI, _inline_ebs("p", "aws://us-east-1a/vol-9"), TOO_MANY, id="inline"),
        pytest.param(ON_N1_INLINE, pod_using("p", "ebs-2"), TOO_MANY, id="existing-inline"),
        pytest.param(ON_N1_CSI, pod_using("p", "legacy"), TOO_MANY, id="in-tree-pv"),
        pytest.param(ON_N1_CSI, pod_using("p", "unbound-aws"), TOO_MANY, id="in-tree-class"),
        pytest.param(ON_N1_INLINE, pod_using("p", "ebs-1"), OK, id="same-disk-counts-once"),
    ],
)
def test_in_tree_volumes_count_as_their_csi_volumes(
    existing: Pod, incoming: Pod, expected: Status
) -> None:
    plugin = NodeVolumeLimits(None, _legacy_handle(n1=1))
    assert run(plugin, incoming, [make_node("n1").obj()], [existing]) == [expected]


def test_in_tree_volumes_count_only_on_a_node_with_a_csinode() -> None:
    plugin = NodeVolumeLimits(None, _legacy_handle(n1=1))
    nodes = [make_node("n1").obj(), make_node("bare").obj()]
    existing = [pod_using("e1", "ebs-1", node="n1"), pod_using("e2", "ebs-1", node="bare")]
    incoming = _inline_ebs("p", "vol-9")
    assert run(plugin, incoming, nodes, existing) == [TOO_MANY, OK]


def test_an_inline_volume_that_cannot_be_translated_is_an_error_where_it_would_count() -> None:
    plugin = NodeVolumeLimits(None, _legacy_handle(n1=5))
    nodes = [make_node("n1").obj(), make_node("bare").obj()]
    statuses = run(plugin, _inline_ebs("p", "aws://z/bad"), nodes, [])
    assert statuses == [
        Status.from_error(
            "converting volume(disk) from inline to csi: failed to translate Kubernetes ID to "
            "EBS Volume ID Invalid format for AWS volume (aws://z/bad)"
        ),
        OK,
    ]


def test_a_pod_with_only_an_inline_in_tree_volume_is_not_skipped() -> None:
    plugin = NodeVolumeLimits(None, handle())
    table = build_table([])
    assert plugin.pre_filter(CycleState(), _inline_ebs("p", "vol-1"), table)[1].is_success
    nfs = make_pod("nfs").spec(volumes=[{"name": "n", "nfs": {"server": "s", "path": "/"}}])
    assert plugin.pre_filter(CycleState(), nfs.obj(), table)[1].is_skip


def test_in_tree_hints() -> None:
    deleted = _hint(EventResource.ASSIGNED_POD, ActionType.DELETE)
    pending = pod_using("p", "ebs-0")
    assert deleted(pending, _inline_ebs("d", "vol-1", node="n1"), None) is QueueingHint.QUEUE
    detached = _hint(EventResource.VOLUME_ATTACHMENT, ActionType.DELETE)
    inline = _inline_ebs("p", "vol-1")
    ebs = make_volume_attachment("va", EBS, "n1", "pv")
    gce = make_volume_attachment("va", GCE, "n1", "pv")
    assert detached(inline, ebs, None) is QueueingHint.QUEUE
    assert detached(inline, gce, None) is QueueingHint.QUEUE_SKIP
    # One it cannot translate is retried rather than left waiting.
    assert detached(_inline_ebs("p", "aws://z/bad"), gce, None) is QueueingHint.QUEUE
