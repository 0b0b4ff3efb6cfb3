"""VolumeBinding Filter on bound in-tree PVs: a node whose CSINode migrated the PV's plugin
judges the PV translated to CSI, as upstream's binder (tryTranslatePVToCSI) does."""

from __future__ import annotations

from typing import Any

import pytest

from plugins.volume_binding import VolumeBinding
from scheduler.framework import Code
from scheduler.framework import CycleState
from scheduler.framework import Status
from scheduler.testing import build_table
from scheduler.testing import make_node
from scheduler.testing.storage_builders import make_csi_node
from scheduler.testing.storage_builders import make_pv
from scheduler.testing.storage_builders import make_pvc
from tests.plugins.test_volume_binding import NODE_CONFLICT
from tests.plugins.test_volume_binding import OK
from tests.plugins.test_volume_binding import filter_all
from tests.plugins.test_volume_binding import handle
from tests.plugins.test_volume_binding import plugin
from tests.plugins.test_volume_binding import pod_using

GCE_PD = "kubernetes.io/gce-pd"
GA_ZONE = "topology.kubernetes.io/zone"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"
GCE_ZONE = "topology.gke.io/zone"

GCE_DISK = ("gcePersistentDisk", {"pdName": "test-disk", "fsType": "ext4"})
EBS_DISK = ("awsElasticBlockStore", {"volumeID": "vol-1"})
CINDER_DISK = ("cinder", {"volumeID": "vol-1"})
AZURE_DISK = ("azureDisk", {"diskName": "d", "diskURI": "uri"})
PORTWORX = ("portworxVolume", {"volumeID": "p"})


def csi_node(node: str, migrated: str | None) -> dict[str, Any]:
    """The node's CSINode naming `migrated` in its migrated-plugins annotation (None: none)."""
    obj = make_csi_node(node)
    if migrated is not None:
        annotations = {"storage.alpha.kubernetes.io/migrated-plugins": migrated}
        obj["metadata"]["annotations"] = annotations
    return obj


def bound_in_tree_pv(
    source: tuple[str, dict[str, Any]], zone_key: str | None = None, *zones: str, **labels: str
) -> dict[str, Any]:
    """PV "pv-disk" of an in-tree type, affine to `zones` under `zone_key` when given."""
    builder = make_pv("pv-disk").capacity("10Gi").labels(**labels)
    if zone_key is not None:
        builder.node_affinity(zone_key, *zones)
    pv = builder.dict()
    field, fields = source
    pv["spec"][field] = dict(fields)
    return pv


def verdict(pv: dict[str, Any], node_labels: dict[str, str], migrated: str | None) -> Status:
    """Filter's status for a pod whose claim is bound to `pv`, on node "node1" with these labels
    and a CSINode naming `migrated` (none at all when migrated is "-")."""
    pvc = make_pvc("data").bound_to("pv-disk").dict()
    csi_nodes = [] if migrated == "-" else [csi_node("node1", migrated)]
    instance = plugin([pvc], [pv], csinodes=csi_nodes)
    node = make_node("node1").labels(**node_labels).obj()
    statuses, _ = filter_all(instance, pod_using("data"), [node])
    return statuses[0]


# Upstream's TestFindPodVolumesWithCSIMigration (binder_test.go): a GCE PD labelled with beta
# zone us-east-1, no node affinity, on nodes labelled by the PD CSI driver.
UPSTREAM_PV = bound_in_tree_pv(
    GCE_DISK, None, **{BETA_ZONE: "us-east-1", BETA_REGION: "us-east-1a"}
)


@pytest.mark.parametrize(
    ("node_zone", "migrated", "expected"),
    [
        pytest.param("us-east-1", GCE_PD, OK, id="pvc-bound"),
        pytest.param("us-east-1", "", OK, id="pvc-bound,csinode-not-migrated"),
        pytest.param("us-east-1", "-", OK, id="pvc-bound,missing-csinode"),
        pytest.param("us-east-2", GCE_PD, NODE_CONFLICT, id="pvc-bound,node-different-zone"),
    ],
)
def test_upstreams_csi_migration_scenarios(node_zone: str, migrated: str, expected: Status) -> None:
    assert verdict(UPSTREAM_PV, {GCE_ZONE: node_zone}, migrated) == expected


@pytest.mark.parametrize(
    ("source", "plugin_name", "driver_zone_key"),
    [
        pytest.param(GCE_DISK, GCE_PD, GCE_ZONE, id="gce-pd"),
        pytest.param(
            EBS_DISK, "kubernetes.io/aws-ebs", "topology.ebs.csi.aws.com/zone", id="aws-ebs"
        ),
        pytest.param(
            CINDER_DISK,
            "kubernetes.io/cinder",
            "topology.cinder.csi.openstack.org/zone",
            id="cinder",
        ),
    ],
)
@pytest.mark.parametrize(
    ("migrated", "labelled_by_driver", "expected"),
    [
        # The migrated node is judged by the driver's zone label, not the Kubernetes one.
        pytest.param(True, False, NODE_CONFLICT, id="migrated-kubernetes-zone-only"),
        pytest.param(True, True, OK, id="migrated-driver-zone"),
        pytest.param(False, False, OK, id="not-migrated"),
    ],
)
def test_the_zone_affinity_speaks_the_drivers_key_on_a_migrated_node(
    source: tuple[str, dict[str, Any]],
    plugin_name: str,
    driver_zone_key: str,
    migrated: bool,
    labelled_by_driver: bool,
    expected: Status,
) -> None:
    pv = bound_in_tree_pv(source, GA_ZONE, "a")
    labels = {GA_ZONE: "a"}
    if labelled_by_driver:
        labels[driver_zone_key] = "a"
    assert verdict(pv, labels, plugin_name if migrated else "") == expected


def test_a_beta_region_becomes_the_ga_region() -> None:
    pv = bound_in_tree_pv(GCE_DISK, BETA_ZONE, "a")
    pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"].append(
        {"key": BETA_REGION, "operator": "In", "values": ["r"]}
    )
    ga_only = {GCE_ZONE: "a", "topology.kubernetes.io/region": "r"}
    assert verdict(pv, ga_only, GCE_PD) == OK
    assert verdict(pv, ga_only, "") == NODE_CONFLICT


@pytest.mark.parametrize(
    ("source", "plugin_name"),
    [(AZURE_DISK, "kubernetes.io/azure-disk"), (PORTWORX, "kubernetes.io/portworx-volume")],
)
def test_azure_disk_and_portworx_keep_their_zone_key(
    source: tuple[str, dict[str, Any]], plugin_name: str
) -> None:
    pv = bound_in_tree_pv(source, GA_ZONE, "a")
    assert verdict(pv, {GA_ZONE: "a"}, plugin_name) == OK
    assert verdict(pv, {"topology.disk.csi.azure.com/zone": "a"}, plugin_name) == NODE_CONFLICT


def test_the_annotation_must_name_the_plugin_exactly() -> None:
    pv = bound_in_tree_pv(GCE_DISK, GA_ZONE, "a")
    assert verdict(pv, {GA_ZONE: "a"}, f"kubernetes.io/aws-ebs,{GCE_PD}") == NODE_CONFLICT
    assert verdict(pv, {GA_ZONE: "a"}, f"kubernetes.io/aws-ebs, {GCE_PD}") == OK


def test_a_pv_the_translator_refuses_fails_a_migrated_node_with_an_error() -> None:
    pv = bound_in_tree_pv(GCE_DISK, None, **{GA_ZONE: "us-east1-a__us-central1-a"})
    pvc = make_pvc("data").bound_to("pv-disk").dict()
    fake = handle([pvc], [pv], csinodes=[csi_node("migrated", GCE_PD), csi_node("plain", "")])
    instance = VolumeBinding(None, fake)
    table = build_table([make_node("migrated").obj(), make_node("plain").obj()])
    state = CycleState()
    assert instance.pre_filter(state, pod_using("data"), table)[1].is_success
    migrated, plain = (instance.filter(state, pod_using("data"), i) for i in table.node_infos)
    assert migrated.code is Code.ERROR
    assert migrated.message() == (
        "could not translate pv: failed to get region from zones: multiple or no regions "
        "gotten from zones, got: map[us-central1:{} us-east1:{}]"
    )
    assert plain == OK
    errors = fake.metrics.registry.get_sample_value(
        "scheduler_volume_scheduling_stage_error_total", {"operation": "predicate"}
    )
    assert errors == 1
