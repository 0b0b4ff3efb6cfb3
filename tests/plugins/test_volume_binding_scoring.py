"""VolumeBinding's Score under StorageCapacityScoring: the shape, its defaults and rules under the
gate, and how full each node's storage would be with the pod's volumes."""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

from plugins.volume_binding import VolumeBinding
from plugins.volume_binding import VolumeBindingArgs
from scheduler.config import load_config_dict
from scheduler.framework import Code
from scheduler.framework import CycleState
from scheduler.framework import Status
from scheduler.framework.errors import ConfigError
from scheduler.runtime.discovery import PluginRegistry
from scheduler.testing import FakeHandle
from scheduler.testing import build_table
from scheduler.testing import make_node
from scheduler.testing import make_pod
from scheduler.testing.storage_builders import claim_volume
from scheduler.testing.storage_builders import make_csi_driver
from scheduler.testing.storage_builders import make_pv
from scheduler.testing.storage_builders import make_pvc
from scheduler.testing.storage_builders import make_storage_capacity
from scheduler.testing.storage_builders import make_storage_class

GATE = "StorageCapacityScoring"
DRIVER = "tracked.csi.example.com"
CLASSES = [
    make_storage_class("local", "kubernetes.io/no-provisioner").wait_for_first_consumer().dict(),
    make_storage_class("tracked", DRIVER).wait_for_first_consumer().dict(),
    make_storage_class("fast", DRIVER).wait_for_first_consumer().dict(),
]
# Shapes as files give them: the default (emptiest first) and bin packing (fullest first).
EMPTIEST_FIRST = [{"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}]
FULLEST_FIRST = [{"utilization": 0, "score": 0}, {"utilization": 100, "score": 10}]
ZONES = ("a", "b", "c")


def _on(gate: str) -> bool:
    return gate == GATE


def _config(args: Mapping[str, Any] | None) -> dict[str, Any]:
    profile: dict[str, Any] = {"schedulerName": "s"}
    if args is not None:
        profile["pluginConfig"] = [{"name": "VolumeBinding", "args": dict(args)}]
    return {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [profile],
    }


def _effective_shape(args: Mapping[str, Any] | None, gates: Any) -> Any:
    config, _ = load_config_dict(_config(args), PluginRegistry.discover(), gates)
    [entry] = [e for e in config.profiles[0].plugin_config if e.name == "VolumeBinding"]
    assert entry.args is not None
    return entry.args.get("shape")


@pytest.mark.parametrize("args", [None, {}, {"shape": None}, {"shape": []}])
def test_under_the_gate_a_missing_or_empty_shape_defaults_to_emptiest_first(
    args: Mapping[str, Any] | None,
) -> None:
    assert _effective_shape(args, _on) == EMPTIEST_FIRST
    assert _effective_shape(None, None) is None  # v1.36's default: the gate is off


def test_under_the_gate_a_shape_is_kept_and_checked_like_requested_to_capacity_ratio() -> None:
    assert _effective_shape({"shape": FULLEST_FIRST}, _on) == FULLEST_FIRST
    bad = {"shape": [{"utilization": 50, "score": 11}, {"utilization": 40, "score": 1}]}
    with pytest.raises(ConfigError) as raised:
        load_config_dict(_config(bad), PluginRegistry.discover(), _on)
    path = "profiles[0].pluginConfig[0].args.shape"
    assert str(raised.value).splitlines() == [
        f"{path}[1].utilization: Invalid value: 40: values must be sorted in increasing order",
        f"{path}[0].score: Invalid value: 11: not in valid range [0, 10]",
    ]


def test_without_the_gate_a_shape_is_refused_naming_the_gate() -> None:
    with pytest.raises(ConfigError, match="turn on the feature gate StorageCapacityScoring"):
        load_config_dict(_config({"shape": FULLEST_FIRST}), PluginRegistry.discover(), None)


def _plugin(
    pvcs: Sequence[Mapping[str, Any]],
    *,
    pvs: Sequence[Mapping[str, Any]] = (),
    capacities: Sequence[Mapping[str, Any]] = (),
    shape: list[dict[str, int]] | None = None,
    gate: bool = True,
) -> VolumeBinding:
    handle = FakeHandle(
        listers={
            "persistentvolumeclaims": pvcs,
            "persistentvolumes": pvs,
            "storageclasses": CLASSES,
            "csidrivers": [make_csi_driver(DRIVER, storage_capacity=True)],
            "csistoragecapacities": capacities,
        },
        gates={GATE: gate},
    )
    args = VolumeBindingArgs.read({"shape": shape} if shape else {}, _on if gate else None)
    return VolumeBinding(args, handle)


def _scores(instance: VolumeBinding, *claims: str) -> tuple[Status, list[int]]:
    """PreScore's status, and each zone's node's score (nodes that pass Filter only)."""
    pod = make_pod("p").spec(volumes=[claim_volume(c) for c in claims]).obj()
    nodes = [make_node(f"n-{zone}").zone(zone).obj() for zone in ZONES]
    table = build_table(nodes)
    state = CycleState()
    _, status = instance.pre_filter(state, pod, table)
    assert status.code in (Code.SUCCESS, Code.SKIP), status
    infos = table.node_infos
    rows = [row for row in range(len(nodes)) if instance.filter(state, pod, infos[row]).is_success]
    pre_score = instance.pre_score(state, pod, table, np.asarray(rows, dtype=np.int64))
    if pre_score.code is not Code.SUCCESS:
        return pre_score, []
    scored = [instance.score(state, pod, infos[row]) for row in rows]
    assert all(s.is_success for _, s in scored)
    return pre_score, [score for score, _ in scored]


def _pools(**sizes: str) -> list[dict[str, Any]]:
    """One CSIStorageCapacity of class `tracked` per zone."""
    return [
        make_storage_capacity(f"cap-{zone}", "tracked", size, zone=zone)
        for zone, size in sizes.items()
    ]


def test_a_claim_to_provision_scores_each_node_by_its_pool_of_the_class() -> None:
    pvcs = [make_pvc("data").storage_class("tracked").request("5Gi").dict()]
    instance = _plugin(pvcs, capacities=_pools(a="10Gi", b="100Gi", c="50Gi"))
    # 50%, 5% and 10% full: 100 minus the utilization, by the default shape.
    assert _scores(instance, "data") == (Status(), [50, 95, 90])


def test_a_bin_packing_shape_prefers_the_fullest_pool() -> None:
    pvcs = [make_pvc("data").storage_class("tracked").request("5Gi").dict()]
    pools = _pools(a="10Gi", b="100Gi", c="50Gi")
    instance = _plugin(pvcs, capacities=pools, shape=FULLEST_FIRST)
    assert _scores(instance, "data") == (Status(), [50, 5, 10])


def test_claims_of_one_class_share_its_pool_and_classes_are_averaged() -> None:
    pvcs = [
        make_pvc("one").storage_class("tracked").request("10Gi").dict(),
        make_pvc("two").storage_class("tracked").request("10Gi").dict(),
        make_pvc("quick").storage_class("fast").request("1Gi").dict(),
    ]
    pools = [
        *_pools(a="40Gi", b="40Gi", c="40Gi"),
        *(make_storage_capacity(f"fast-{z}", "fast", "2Gi", zone=z) for z in ZONES),
    ]
    instance = _plugin(pvcs, capacities=pools)
    # tracked: 20 of 40Gi, one pool for both claims (not 80Gi): 50; fast: 1 of 2Gi: 50.
    assert _scores(instance, "one", "two", "quick") == (Status(), [50, 50, 50])
    pools[-1] = make_storage_capacity("fast-c", "fast", "1600Mi", zone="c")
    # fast on c: 1024 of 1600Mi = 64% -> 36; the mean of 50 and 36 is 43.
    assert _scores(_plugin(pvcs, capacities=pools), "one", "two", "quick")[1] == [50, 50, 43]


def test_the_mean_of_the_classes_rounds_half_up() -> None:
    pvcs = [
        make_pvc("one").storage_class("tracked").request("5Gi").dict(),
        make_pvc("quick").storage_class("fast").request("1Gi").dict(),
    ]
    pools = [
        *_pools(a="100Gi", b="100Gi", c="100Gi"),
        *(make_storage_capacity(f"fast-{z}", "fast", "2Gi", zone=z) for z in ZONES),
    ]
    # tracked 5% -> 95, fast 50% -> 50: 72.5 -> 73.
    assert _scores(_plugin(pvcs, capacities=pools), "one", "quick")[1] == [73, 73, 73]


def test_a_pool_that_gives_only_a_maximum_volume_size_counts_as_full() -> None:
    pvcs = [make_pvc("data").storage_class("tracked").request("5Gi").dict()]
    pool = make_storage_capacity("cap", "tracked", "1Gi", maximum_volume_size="10Gi")
    del pool["capacity"]
    pool["nodeTopology"] = {"matchLabels": {}}
    assert _scores(_plugin(pvcs, capacities=[pool]), "data")[1] == [0, 0, 0]


def test_bound_to_static_volumes_only_those_count() -> None:
    pvcs = [
        make_pvc("local-data").storage_class("local").request("5Gi").dict(),
        make_pvc("data").storage_class("tracked").request("5Gi").dict(),
    ]
    pvs = [
        make_pv(f"pv-{zone}").storage_class("local").capacity(size).zone(zone).available().dict()
        for zone, size in (("a", "10Gi"), ("b", "20Gi"), ("c", "5Gi"))
    ]
    instance = _plugin(pvcs, pvs=pvs, capacities=_pools(a="5Gi", b="5Gi", c="5Gi"))
    # The tracked pools are all full, but the static volumes decide: 50%, 25% and 100%.
    assert _scores(instance, "local-data", "data") == (Status(), [50, 75, 0])


def test_without_the_gate_pre_score_skips_score() -> None:
    pvcs = [make_pvc("data").storage_class("tracked").request("5Gi").dict()]
    instance = _plugin(pvcs, capacities=_pools(a="10Gi", b="100Gi", c="50Gi"), gate=False)
    assert _scores(instance, "data") == (Status.skip(), [])


def test_a_pod_without_claims_is_not_scored() -> None:
    assert (
        _scores(
            _plugin([]),
        )[0]
        == Status.skip()
    )
