"""VolumeBinding PreFilter and Filter: claim states, PV matching, provisioning, capacity."""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from pydantic import ValidationError

from plugins.volume_binding import REASON_BIND_CONFLICT
from plugins.volume_binding import REASON_NODE_CONFLICT
from plugins.volume_binding import REASON_NOT_ENOUGH_SPACE
from plugins.volume_binding import REASON_PV_NOT_EXIST
from plugins.volume_binding import REASON_UNBOUND_IMMEDIATE
from plugins.volume_binding import SPEC
from plugins.volume_binding import VolumeBinding
from plugins.volume_binding import VolumeBindingArgs
from plugins.volume_binding.binder import PodVolumes
from plugins.volume_binding.state import STATE_KEY
from plugins.volume_binding.state import StateData
from scheduler.framework import ActionType
from scheduler.framework import BatchFilterPlugin
from scheduler.framework import Code
from scheduler.framework import CycleState
from scheduler.framework import EventResource
from scheduler.framework import FilterPlugin
from scheduler.framework import Node
from scheduler.framework import Pod
from scheduler.framework import PreBindPlugin
from scheduler.framework import PreFilterPlugin
from scheduler.framework import QueueingHint
from scheduler.framework import ReservePlugin
from scheduler.framework import Status
from scheduler.objects.node import ZONE_LABEL
from scheduler.testing import FakeHandle
from scheduler.testing import build_table
from scheduler.testing import make_node
from scheduler.testing import make_pod
from scheduler.testing.plugin_harness import DictLister
from scheduler.testing.plugin_harness import filter_batch_as_statuses
from scheduler.testing.plugin_harness import filter_each_node
from scheduler.testing.storage_builders import claim_volume
from scheduler.testing.storage_builders import ephemeral_volume
from scheduler.testing.storage_builders import make_csi_driver
from scheduler.testing.storage_builders import make_pv
from scheduler.testing.storage_builders import make_pvc
from scheduler.testing.storage_builders import make_storage_capacity as capacity
from scheduler.testing.storage_builders import make_storage_class

OK = Status()
BIND_CONFLICT = Status.unresolvable(REASON_BIND_CONFLICT)
NODE_CONFLICT = Status.unresolvable(REASON_NODE_CONFLICT)

CLASSES = [
    make_storage_class("local", "kubernetes.io/no-provisioner").wait_for_first_consumer().dict(),
    make_storage_class("dynamic", "csi.example.com").wait_for_first_consumer().dict(),
    make_storage_class("zonal", "csi.example.com")
    .wait_for_first_consumer()
    .allowed_zones("a")
    .dict(),
    make_storage_class("tracked", "tracked.csi.example.com").wait_for_first_consumer().dict(),
    make_storage_class("immediate", "csi.example.com").dict(),
]


def handle(
    pvcs: Sequence[Mapping[str, Any]] = (),
    pvs: Sequence[Mapping[str, Any]] = (),
    **extra: Sequence[Mapping[str, Any]],
) -> FakeHandle:
    listers: dict[str, Sequence[Mapping[str, Any]]] = {
        "persistentvolumeclaims": pvcs,
        "persistentvolumes": pvs,
        "storageclasses": CLASSES,
    }
    listers.update(extra)
    return FakeHandle(listers=listers)


def plugin(
    pvcs: Sequence[Mapping[str, Any]] = (),
    pvs: Sequence[Mapping[str, Any]] = (),
    **extra: Sequence[Mapping[str, Any]],
) -> VolumeBinding:
    return VolumeBinding(None, handle(pvcs, pvs, **extra))


def pod_using(*claims: str, name: str = "p") -> Pod:
    return make_pod(name).spec(volumes=[claim_volume(c) for c in claims]).obj()


def zoned_nodes(*zones: str) -> list[Node]:
    return [make_node(f"n-{zone}").zone(zone).obj() for zone in zones]


def filter_all(
    instance: VolumeBinding, pod: Pod, nodes: Sequence[Node]
) -> tuple[list[Status], CycleState]:
    table = build_table(nodes)
    state = CycleState()
    _, status = instance.pre_filter(state, pod, table)
    assert status.code is Code.SUCCESS, status
    batch_state = CycleState()
    instance.pre_filter(batch_state, pod, table)
    per_node = filter_each_node(instance, state, pod, table)
    assert filter_batch_as_statuses(instance, batch_state, pod, table) == per_node
    return per_node, state


def test_spec() -> None:
    instance = plugin()
    assert SPEC.name == VolumeBinding.name == "VolumeBinding"
    # Upstream's set: PreScore skips Score unless StorageCapacityScoring is on.
    assert SPEC.extension_points == [
        "PreFilter",
        "Filter",
        "PreScore",
        "Score",
        "Reserve",
        "PreBind",
    ]
    assert SPEC.args_model is VolumeBindingArgs
    assert set(SPEC.watches) == {
        "persistentvolumeclaims",
        "persistentvolumes",
        "storageclasses",
        "csinodes",
        "csidrivers",
        "csistoragecapacities",
    }
    for protocol in (
        PreFilterPlugin,
        FilterPlugin,
        BatchFilterPlugin,
        ReservePlugin,
        PreBindPlugin,
    ):
        assert isinstance(instance, protocol)


def test_args() -> None:
    assert VolumeBindingArgs().bind_timeout_seconds == 600
    assert VolumeBindingArgs.model_validate({"bindTimeoutSeconds": 0}).bind_timeout_seconds == 0
    with pytest.raises(ValidationError) as raised:
        VolumeBindingArgs.model_validate({"bindTimeoutSeconds": -1})
    error = raised.value.errors()[0]
    assert error["loc"] == ("bindTimeoutSeconds",)
    assert error["msg"] == (
        "Invalid value: -1: invalid BindTimeoutSeconds, should not be a negative value"
    )
    with pytest.raises(ValidationError):
        VolumeBindingArgs.model_validate({"shape": []})


def test_pods_without_claims_skip_and_cost_nothing_later() -> None:
    instance = plugin()
    state = CycleState()
    pod = make_pod("p").spec(volumes=[{"name": "cfg", "configMap": {"name": "c"}}]).obj()
    assert instance.pre_filter(state, pod, build_table([]))[1].is_skip
    assert instance.reserve(state, pod, "n1").is_success
    instance.unreserve(state, pod, "n1")


@pytest.mark.parametrize(
    ("pvcs", "pod", "expected"),
    [
        pytest.param([], pod_using("data"), 'persistentvolumeclaim "data" not found', id="missing"),
        pytest.param(
            [],
            make_pod("app").spec(volumes=[ephemeral_volume("scratch")]).obj(),
            "waiting for ephemeral volume controller to create the persistentvolumeclaim "
            '"app-scratch"',
            id="ephemeral-not-created",
        ),
        pytest.param(
            [make_pvc("app-scratch").owned_by("not-the-pod").dict()],
            make_pod("app").spec(volumes=[ephemeral_volume("scratch")]).obj(),
            "PVC default/app-scratch was not created for pod default/app (pod is not owner)",
            id="ephemeral-foreign",
        ),
        pytest.param(
            [make_pvc("data").volume_name("pv-x").phase("Lost").dict()],
            pod_using("data"),
            'persistentvolumeclaim "data" bound to non-existent persistentvolume "pv-x"',
            id="lost",
        ),
        pytest.param(
            [
                {
                    **make_pvc("data").dict(),
                    "metadata": {"name": "data", "namespace": "default", "deletionTimestamp": "x"},
                }
            ],
            pod_using("data"),
            'persistentvolumeclaim "data" is being deleted',
            id="deleting",
        ),
        pytest.param(
            [make_pvc("data").storage_class("immediate").dict()],
            pod_using("data"),
            REASON_UNBOUND_IMMEDIATE,
            id="unbound-immediate",
        ),
        pytest.param(
            [make_pvc("data").dict()],
            pod_using("data"),
            REASON_UNBOUND_IMMEDIATE,
            id="unbound-without-class",
        ),
        pytest.param(
            [make_pvc("data").storage_class("unknown").dict()],
            pod_using("data"),
            REASON_UNBOUND_IMMEDIATE,
            id="unbound-unknown-class",
        ),
        pytest.param(
            [make_pvc("data").storage_class("local").volume_name("pv-1").dict()],
            pod_using("data"),
            REASON_UNBOUND_IMMEDIATE,
            id="pre-bound-not-yet-complete",
        ),
    ],
)
def test_pre_filter_rejections(pvcs: list[dict[str, Any]], pod: Pod, expected: str) -> None:
    _, status = plugin(pvcs).pre_filter(CycleState(), pod, build_table([]))
    assert status == Status.unresolvable(expected)


def test_pre_filter_leaves_every_node_to_filter_for_bound_local_volumes() -> None:
    pvcs = [make_pvc("a").bound_to("pv-a").dict(), make_pvc("b").bound_to("pv-b").dict()]
    pvs = [
        make_pv("pv-a").on_host("n1", "n2").dict(),
        make_pv("pv-b").on_host("n2", "n3").dict(),
    ]
    result, status = plugin(pvcs, pvs).pre_filter(
        CycleState(), pod_using("a", "b"), build_table([])
    )
    assert status.is_success
    assert result is None


def test_bound_volumes_must_suit_the_node() -> None:
    pvcs = [make_pvc("data").bound_to("pv").dict()]
    instance = plugin(pvcs, [make_pv("pv").zone("a").dict()])
    statuses, _ = filter_all(instance, pod_using("data"), zoned_nodes("a", "b"))
    assert statuses == [OK, NODE_CONFLICT]


# A node affinity term labels.NewRequirement refuses (a Gt bound that is no integer passes API
# validation; old PVs may keep values that are no label values) matches no node, and the other
# terms are still tried, as upstream's CheckNodeAffinity tries them.
UNPARSABLE_TERM = {
    "matchExpressions": [{"key": "example.com/gen", "operator": "Gt", "values": ["abc"]}]
}
ZONE_A_TERM = {"matchExpressions": [{"key": ZONE_LABEL, "operator": "In", "values": ["a"]}]}
NOT_A_LABEL_TERM = {
    "matchExpressions": [{"key": ZONE_LABEL, "operator": "NotIn", "values": ["not a label"]}]
}


def with_affinity_terms(pv: Any, *terms: dict[str, Any]) -> dict[str, Any]:
    raw: dict[str, Any] = pv.dict()
    raw["spec"]["nodeAffinity"] = {"required": {"nodeSelectorTerms": list(terms)}}
    return raw


@pytest.mark.parametrize(
    ("terms", "expected"),
    [
        pytest.param([UNPARSABLE_TERM, ZONE_A_TERM], [OK, NODE_CONFLICT], id="other-term-tried"),
        pytest.param([UNPARSABLE_TERM], [NODE_CONFLICT] * 2, id="only-unparsable"),
        pytest.param([NOT_A_LABEL_TERM], [NODE_CONFLICT] * 2, id="invalid-label-value"),
    ],
)
def test_unparsable_affinity_terms_of_a_bound_volume_match_no_node(
    terms: list[dict[str, Any]], expected: list[Status]
) -> None:
    pv = with_affinity_terms(make_pv("pv"), *terms)
    instance = plugin([make_pvc("data").bound_to("pv").dict()], [pv])
    statuses, _ = filter_all(instance, pod_using("data"), zoned_nodes("a", "b"))
    assert statuses == expected


@pytest.mark.parametrize(
    ("terms", "expected"),
    [
        pytest.param([UNPARSABLE_TERM, ZONE_A_TERM], [OK, BIND_CONFLICT], id="other-term-tried"),
        pytest.param([NOT_A_LABEL_TERM], [BIND_CONFLICT] * 2, id="invalid-label-value"),
    ],
)
def test_unparsable_affinity_terms_of_a_static_volume_match_no_node(
    terms: list[dict[str, Any]], expected: list[Status]
) -> None:
    static = make_pv("pv").storage_class("local").capacity("5Gi").available()
    pvcs = [make_pvc("data").storage_class("local").request("5Gi").dict()]
    instance = plugin(pvcs, [with_affinity_terms(static, *terms)])
    statuses, _ = filter_all(instance, pod_using("data"), zoned_nodes("a", "b"))
    assert statuses == expected


def test_a_bound_claim_whose_volume_is_gone() -> None:
    instance = plugin([make_pvc("data").bound_to("gone").dict()])
    statuses, _ = filter_all(instance, pod_using("data"), zoned_nodes("a"))
    assert statuses == [Status.unresolvable(REASON_PV_NOT_EXIST)]


def test_a_waiting_claim_takes_a_static_volume_the_node_can_reach() -> None:
    pvcs = [make_pvc("data").storage_class("local").request("5Gi").dict()]
    pvs = [make_pv("pv-b").storage_class("local").capacity("10Gi").zone("b").available().dict()]
    instance = plugin(pvcs, pvs)
    statuses, _ = filter_all(instance, pod_using("data"), zoned_nodes("a", "b", "c"))
    assert statuses == [BIND_CONFLICT, OK, BIND_CONFLICT]


# Static volume matching, for a claim of class "local" asking 5Gi ReadWriteOnce.
MATCH_CASES = [
    pytest.param(make_pv("v").storage_class("local").capacity("5Gi").available(), True, id="fits"),
    pytest.param(
        make_pv("v").storage_class("local").capacity("4Gi").available(), False, id="small"
    ),
    pytest.param(
        make_pv("v").storage_class("other").capacity("9Gi").available(), False, id="class"
    ),
    pytest.param(make_pv("v").storage_class("local").capacity("9Gi"), False, id="not-available"),
    pytest.param(
        make_pv("v").storage_class("local").capacity("9Gi").available().claim("someone"),
        False,
        id="claimed-by-another",
    ),
    pytest.param(
        make_pv("v").storage_class("local").capacity("9Gi").claim("data"),
        True,
        id="pre-bound-to-this-claim-even-if-not-available",
    ),
    pytest.param(
        make_pv("v")
        .storage_class("local")
        .capacity("9Gi")
        .available()
        .access_modes("ReadOnlyMany"),
        False,
        id="access-modes",
    ),
    pytest.param(
        make_pv("v").storage_class("local").capacity("9Gi").available().zone("elsewhere"),
        False,
        id="node-affinity",
    ),
    pytest.param(
        make_pv("v").storage_class("local").capacity("9Gi").available().attributes_class("gold"),
        False,
        id="attributes-class-the-claim-does-not-ask-for",
    ),
    pytest.param(
        make_pv("v").storage_class("local").capacity("9Gi").claim("data").attributes_class("gold"),
        False,
        id="pre-bound-but-another-attributes-class",
    ),
]


@pytest.mark.parametrize(("pv", "matches"), MATCH_CASES)
def test_static_matching_rules(pv: Any, matches: bool) -> None:
    pvcs = [make_pvc("data").storage_class("local").request("5Gi").dict()]
    instance = plugin(pvcs, [pv.dict()])
    statuses, _ = filter_all(instance, pod_using("data"), zoned_nodes("a"))
    assert statuses == [OK if matches else BIND_CONFLICT]


@pytest.mark.parametrize(("volume_class", "matches"), [("gold", True), ("silver", False)])
def test_a_claim_asking_for_an_attributes_class_gets_a_volume_of_that_class(
    volume_class: str, matches: bool
) -> None:
    pvc = make_pvc("data").storage_class("local").request("5Gi").attributes_class("gold")
    pv = make_pv("v").storage_class("local").capacity("5Gi").available()
    instance = plugin([pvc.dict()], [pv.attributes_class(volume_class).dict()])
    statuses, _ = filter_all(instance, pod_using("data"), zoned_nodes("a"))
    assert statuses == [OK if matches else BIND_CONFLICT]


def test_selector_volume_mode_and_the_smallest_fit() -> None:
    pvcs = [
        make_pvc("data").storage_class("local").request("5Gi").selector(tier="gold").dict(),
        make_pvc("logs").storage_class("local").request("1Gi").dict(),
    ]
    pvs = [
        make_pv("snug-plain").storage_class("local").capacity("6Gi").available(),
        make_pv("big-gold")
        .storage_class("local")
        .capacity("50Gi")
        .label("tier", "gold")
        .available(),
        make_pv("snug-gold")
        .storage_class("local")
        .capacity("6Gi")
        .label("tier", "gold")
        .available(),
        make_pv("tiny").storage_class("local").capacity("1Gi").available(),
    ]
    raw = [pv.dict() for pv in pvs]
    raw[3]["spec"]["volumeMode"] = "Block"
    instance = plugin(pvcs, raw)
    _, state = filter_all(instance, pod_using("data", "logs"), zoned_nodes("a"))
    instance.reserve(state, pod_using("data", "logs"), "n-a")
    chosen = {
        b.pvc["metadata"]["name"]: b.pv["metadata"]["name"]
        for b in state_volumes(state, "n-a").static_bindings
    }
    # "logs" (1Gi, the smallest request) goes first: "tiny" is Block, so it takes the first
    # of the two 6Gi volumes; "data" needs gold and takes the smallest gold volume left.
    assert chosen == {"logs": "snug-plain", "data": "snug-gold"}


def state_volumes(state: CycleState, node: str) -> PodVolumes:
    return state.read(STATE_KEY, StateData).volumes_by_node[node]


def test_two_claims_never_get_the_same_volume() -> None:
    pvcs = [
        make_pvc("one").storage_class("local").request("1Gi").dict(),
        make_pvc("two").storage_class("local").request("1Gi").dict(),
    ]
    pvs = [make_pv("only").storage_class("local").capacity("1Gi").available().dict()]
    statuses, _ = filter_all(plugin(pvcs, pvs), pod_using("one", "two"), zoned_nodes("a"))
    assert statuses == [BIND_CONFLICT]


def test_dynamic_provisioning_when_no_volume_matches() -> None:
    pvcs = [make_pvc("data").storage_class("dynamic").request("5Gi").dict()]
    statuses, state = filter_all(plugin(pvcs), pod_using("data"), zoned_nodes("a", "b"))
    assert statuses == [OK, OK]
    assert [c["metadata"]["name"] for c in state_volumes(state, "n-b").provisions] == ["data"]


def test_allowed_topologies_limit_provisioning() -> None:
    pvcs = [make_pvc("data").storage_class("zonal").request("5Gi").dict()]
    statuses, _ = filter_all(plugin(pvcs), pod_using("data"), zoned_nodes("a", "b"))
    assert statuses == [OK, BIND_CONFLICT]


@pytest.mark.parametrize(
    ("extra_terms", "expected"),
    [
        pytest.param([], [BIND_CONFLICT, BIND_CONFLICT], id="only-the-invalid-term"),
        pytest.param(
            [{"matchLabelExpressions": [{"key": ZONE_LABEL, "values": ["a"]}]}],
            [OK, BIND_CONFLICT],
            id="a-valid-term-after-it",
        ),
    ],
)
def test_allowed_topologies_terms_with_a_value_that_is_no_label_value_allow_no_node(
    extra_terms: list[dict[str, Any]], expected: list[Status]
) -> None:
    # StorageClass validation checks values for presence and repeats only; upstream's
    # labels.NewRequirement refuses "zone b", and the term is skipped.
    picky = make_storage_class("picky").wait_for_first_consumer().allowed_zones("a", "zone b")
    storage_class = picky.dict()
    storage_class["allowedTopologies"].extend(extra_terms)
    pvcs = [make_pvc("data").storage_class("picky").request("5Gi").dict()]
    instance = plugin(pvcs, storageclasses=[storage_class])
    statuses, _ = filter_all(instance, pod_using("data"), zoned_nodes("a", "b"))
    assert statuses == expected


def test_selected_node_pins_a_claim_being_provisioned() -> None:
    pvcs = [make_pvc("data").storage_class("dynamic").selected_node("n-b").dict()]
    statuses, _ = filter_all(plugin(pvcs), pod_using("data"), zoned_nodes("a", "b"))
    assert statuses == [BIND_CONFLICT, OK]


@pytest.mark.parametrize(
    ("driver_tracks", "capacities", "expected"),
    [
        pytest.param(False, [], [OK, OK], id="driver-does-not-track-capacity"),
        pytest.param(True, [], [Status.unresolvable(REASON_NOT_ENOUGH_SPACE)] * 2, id="none"),
        pytest.param(
            True,
            [capacity("c1", "tracked", "100Gi", zone="a")],
            [OK, Status.unresolvable(REASON_NOT_ENOUGH_SPACE)],
            id="zone-a-only",
        ),
        pytest.param(
            True,
            [capacity("c1", "tracked", "100Gi", zone="a", maximum_volume_size="5Gi")],
            [Status.unresolvable(REASON_NOT_ENOUGH_SPACE)] * 2,
            id="maximum-volume-size-wins",
        ),
        pytest.param(
            True,
            [capacity("c1", "other-class", "100Gi", zone="a")],
            [Status.unresolvable(REASON_NOT_ENOUGH_SPACE)] * 2,
            id="other-class",
        ),
        pytest.param(
            True,
            [capacity("c1", "tracked", "100Gi")],
            [Status.unresolvable(REASON_NOT_ENOUGH_SPACE)] * 2,
            id="no-topology-reaches-no-node",
        ),
    ],
)
def test_storage_capacity(
    driver_tracks: bool, capacities: list[dict[str, Any]], expected: list[Status]
) -> None:
    pvcs = [make_pvc("data").storage_class("tracked").request("10Gi").dict()]
    instance = plugin(
        pvcs,
        csidrivers=[make_csi_driver("tracked.csi.example.com", storage_capacity=driver_tracks)],
        csistoragecapacities=capacities,
    )
    statuses, _ = filter_all(instance, pod_using("data"), zoned_nodes("a", "b"))
    assert statuses == expected


def test_several_reasons_at_once() -> None:
    pvcs = [
        make_pvc("bound").bound_to("pv").dict(),
        make_pvc("data").storage_class("local").dict(),
    ]
    instance = plugin(pvcs, [make_pv("pv").zone("a").dict()])
    statuses, _ = filter_all(instance, pod_using("bound", "data"), zoned_nodes("b"))
    assert statuses == [Status.unresolvable(REASON_NODE_CONFLICT, REASON_BIND_CONFLICT)]


def test_a_claim_without_a_known_class_at_provisioning_is_an_error() -> None:
    # The class existed at PreFilter (delayed binding) but is gone by Filter time.
    fake = handle([make_pvc("data").storage_class("dynamic").dict()])
    instance = VolumeBinding(None, fake)
    table = build_table(zoned_nodes("a"))
    state = CycleState()
    assert instance.pre_filter(state, pod_using("data"), table)[1].is_success
    fake._listers["storageclasses"] = DictLister()
    status = instance.filter(state, pod_using("data"), table.node_infos[0])
    assert status.code is Code.ERROR
    assert status.message() == 'failed to find storage class "dynamic"'
    errors = fake.metrics.registry.get_sample_value(
        "scheduler_volume_scheduling_stage_error_total", {"operation": "predicate"}
    )
    assert errors == 1


def _hint(resource: EventResource) -> Any:
    for entry in plugin().events_to_register():
        if entry.event.resource is resource:
            return entry.hint
    raise AssertionError(f"{resource} not registered")


def test_events_to_register() -> None:
    add_or_update = ActionType.ADD | ActionType.UPDATE
    registered = {(e.event.resource, e.event.action) for e in plugin().events_to_register()}
    assert registered == {
        (EventResource.STORAGE_CLASS, add_or_update),
        (EventResource.PERSISTENT_VOLUME_CLAIM, add_or_update),
        (EventResource.PERSISTENT_VOLUME, add_or_update),
        (EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
        (EventResource.CSI_NODE, add_or_update),
        (EventResource.CSI_DRIVER, ActionType.UPDATE),
        (EventResource.CSI_STORAGE_CAPACITY, add_or_update),
    }
    assert _hint(EventResource.PERSISTENT_VOLUME) is None
    assert _hint(EventResource.NODE) is None


def test_hints() -> None:
    pod = pod_using("data")
    claim = _hint(EventResource.PERSISTENT_VOLUME_CLAIM)
    assert claim(pod, None, make_pvc("data").dict()) is QueueingHint.QUEUE
    assert claim(pod, make_pvc("data").dict(), make_pvc("data").dict()) is QueueingHint.QUEUE
    assert claim(pod, None, make_pvc("data", "other").dict()) is QueueingHint.QUEUE_SKIP
    assert claim(pod, None, make_pvc("x").dict()) is QueueingHint.QUEUE_SKIP

    storage_class = _hint(EventResource.STORAGE_CLASS)
    plain = make_storage_class("s").dict()
    assert storage_class(pod, None, plain) is QueueingHint.QUEUE
    assert storage_class(pod, plain, make_storage_class("s").allowed_zones("a").dict()) is (
        QueueingHint.QUEUE
    )
    relabelled = make_storage_class("s").label("x", "y").dict()
    assert storage_class(pod, plain, relabelled) is QueueingHint.QUEUE_SKIP

    capacity_hint = _hint(EventResource.CSI_STORAGE_CAPACITY)
    small = capacity("c", "s", "1Gi")
    assert capacity_hint(pod, None, small) is QueueingHint.QUEUE
    assert capacity_hint(pod, small, capacity("c", "s", "2Gi")) is QueueingHint.QUEUE
    assert capacity_hint(pod, capacity("c", "s", "2Gi"), small) is QueueingHint.QUEUE_SKIP

    csi_node = _hint(EventResource.CSI_NODE)
    node = {"metadata": {"name": "n1"}, "spec": {"drivers": []}}
    migrated = {
        "metadata": {
            "name": "n1",
            "annotations": {"storage.alpha.kubernetes.io/migrated-plugins": "kubernetes.io/gce-pd"},
        },
        "spec": {"drivers": []},
    }
    assert csi_node(pod, None, node) is QueueingHint.QUEUE
    assert csi_node(pod, node, migrated) is QueueingHint.QUEUE
    assert csi_node(pod, node, node) is QueueingHint.QUEUE_SKIP

    driver = _hint(EventResource.CSI_DRIVER)
    inline = make_pod("p").spec(volumes=[{"name": "v", "csi": {"driver": "d"}}]).obj()
    tracked, untracked = make_csi_driver("d", storage_capacity=True), make_csi_driver("d")
    assert driver(inline, tracked, untracked) is QueueingHint.QUEUE
    assert driver(inline, untracked, tracked) is QueueingHint.QUEUE_SKIP
    assert driver(pod, tracked, untracked) is QueueingHint.QUEUE_SKIP


VOLUME_ZONES = st.lists(st.sampled_from(["a", "b", "c", None]), min_size=0, max_size=4)


@settings(max_examples=60, deadline=None)
@given(
    volume_zones=VOLUME_ZONES,
    node_zones=st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=6),
    claim_class=st.sampled_from(["local", "dynamic", "zonal"]),
    bound_zone=st.sampled_from(["a", "b", None, "none"]),
    data=st.data(),
)
def test_batch_and_per_node_forms_agree(
    volume_zones: list[str | None],
    node_zones: list[str],
    claim_class: str,
    bound_zone: str | None,
    data: st.DataObject,
) -> None:
    pvs = []
    for i, zone in enumerate(volume_zones):
        builder = make_pv(f"pv{i}").storage_class("local").capacity("5Gi").available()
        if zone is not None:
            builder.zone(zone)
        pvs.append(builder.dict())
    pvcs = [make_pvc("data").storage_class(claim_class).request("5Gi").dict()]
    claims = ["data"]
    if bound_zone != "none":
        bound = make_pv("bound-pv")
        if bound_zone is not None:
            bound.zone(bound_zone)
        pvs.append(bound.dict())
        pvcs.append(make_pvc("bound").bound_to("bound-pv").dict())
        claims.append("bound")
    instance = plugin(pvcs, pvs)
    nodes = [make_node(f"n{i}").zone(z).obj() for i, z in enumerate(node_zones)]
    table = build_table(nodes)
    pod = pod_using(*claims)
    state, batch_state = CycleState(), CycleState()
    instance.pre_filter(state, pod, table)
    instance.pre_filter(batch_state, pod, table)
    per_node = filter_each_node(instance, state, pod, table)
    rows = np.asarray(data.draw(st.permutations(range(table.size))), dtype=np.int64)
    assert filter_batch_as_statuses(instance, batch_state, pod, table, rows) == [
        per_node[int(r)] for r in rows
    ]
