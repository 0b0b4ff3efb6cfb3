"""In-tree PVs translated to CSI as VolumeBinding checks them: the node affinity after
csi-translation-lib's topology rewrite, and which CSINodes count as migrated."""

from __future__ import annotations

from typing import Any

import pytest

from plugins.helpers.csi_migration import MIGRATED_PLUGINS_ANNOTATION
from plugins.helpers.csi_migration import TranslationError
from plugins.helpers.csi_migration import migrated_on_node
from plugins.helpers.csi_migration import translate_pv_to_csi
from scheduler.testing.storage_builders import make_csi_node
from scheduler.testing.storage_builders import make_pv

GCE_KEY = "topology.gke.io/zone"
EBS_KEY = "topology.ebs.csi.aws.com/zone"
CINDER_KEY = "topology.cinder.csi.openstack.org/zone"
GA_ZONE = "topology.kubernetes.io/zone"
GA_REGION = "topology.kubernetes.io/region"
BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION = "failure-domain.beta.kubernetes.io/region"

BETA_LABELS = {BETA_ZONE: "us-east-1a", BETA_REGION: "us-east-1"}
GA_LABELS = {GA_ZONE: "us-east-1a", GA_REGION: "us-east-1"}
REGIONAL_BETA = {BETA_ZONE: "europe-west1-b__europe-west1-c"}
REGIONAL_GA = {GA_ZONE: "europe-west1-b__europe-west1-c"}

GCE = ("gcePersistentDisk", {"pdName": "test-disk", "fsType": "ext4"})
EBS = ("awsElasticBlockStore", {"volumeID": "vol01", "fsType": "ext3", "partition": 1})
CINDER = ("cinder", {"volumeID": "vol1", "fsType": "ext4"})


def in_tree_pv(
    source: tuple[str, dict[str, Any]],
    labels: dict[str, str] | None = None,
    *terms: dict[str, Any],
) -> dict[str, Any]:
    builder = make_pv("pv").labels(**(labels or {}))
    pv = builder.dict()
    field, fields = source
    pv["spec"][field] = dict(fields)
    if terms:
        pv["spec"]["nodeAffinity"] = {"required": {"nodeSelectorTerms": list(terms)}}
    return pv


def term(*expressions: tuple[str, str, list[str]]) -> dict[str, Any]:
    return {
        "matchExpressions": [
            {"key": key, "operator": operator, "values": values}
            for key, operator, values in expressions
        ]
    }


def zone_in(key: str, *zones: str) -> dict[str, Any]:
    return term((key, "In", list(zones)))


def terms_of(pv: dict[str, Any]) -> list[dict[str, Any]]:
    terms: list[dict[str, Any]] = pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"]
    return terms


# csi-translation-lib's TestTopologyTranslation (translate_test.go), for each of the three
# plugins whose translation rewrites topology: (PV labels, its affinity's zone key or None,
# the zones of that expression, the zones the driver's key gets). "csi" stands for the driver's
# own key.
TOPOLOGIES = {
    "beta-labels": (BETA_LABELS, None, [], ["us-east-1a"]),
    "ga-labels": (GA_LABELS, None, [], ["us-east-1a"]),
    "beta-topology": (None, BETA_ZONE, ["us-east-2a"], ["us-east-2a"]),
    "csi-topology": (None, "csi", ["us-east-2a"], ["us-east-2a"]),
    "labels-and-topology": (BETA_LABELS, BETA_ZONE, ["us-east-2a"], ["us-east-2a"]),
    "ga-labels-and-topology": (GA_LABELS, GA_ZONE, ["us-east-2a"], ["us-east-2a"]),
    "regional-zones": (REGIONAL_BETA, None, [], ["europe-west1-b", "europe-west1-c"]),
    "regional-topology": (None, GA_ZONE, ["europe-west1-b", "europe-west1-c"], None),
    "beta-regional-both": (REGIONAL_BETA, BETA_ZONE, ["europe-west1-f", "europe-west1-g"], None),
    "ga-regional-both": (REGIONAL_GA, GA_ZONE, ["europe-west1-f", "europe-west1-g"], None),
}


@pytest.mark.parametrize(
    ("source", "csi_key"),
    [
        pytest.param(GCE, GCE_KEY, id="gce-pd"),
        pytest.param(EBS, EBS_KEY, id="aws-ebs"),
        pytest.param(CINDER, CINDER_KEY, id="cinder"),
    ],
)
@pytest.mark.parametrize(
    ("labels", "affinity_key", "affinity_zones", "expected_zones"),
    TOPOLOGIES.values(),
    ids=TOPOLOGIES.keys(),
)
def test_translated_zone_affinity_as_upstreams_topology_tests_want_it(
    source: tuple[str, dict[str, Any]],
    csi_key: str,
    labels: dict[str, str] | None,
    affinity_key: str | None,
    affinity_zones: list[str],
    expected_zones: list[str] | None,
) -> None:
    if affinity_key is None:
        pv = in_tree_pv(source, labels)
    else:
        key = csi_key if affinity_key == "csi" else affinity_key
        pv = in_tree_pv(source, labels, zone_in(key, *affinity_zones))
    # None: the affinity's zones, moved to the driver's key.
    zones = affinity_zones if expected_zones is None else expected_zones
    assert terms_of(translate_pv_to_csi(pv)) == [zone_in(csi_key, *zones)]


def test_every_term_of_the_affinity_is_translated() -> None:
    west_f, west_g = zone_in(GA_ZONE, "europe-west1-f"), zone_in(GA_ZONE, "europe-west1-g")
    assert terms_of(translate_pv_to_csi(in_tree_pv(GCE, None, west_f, west_g))) == [
        zone_in(GCE_KEY, "europe-west1-f"),
        zone_in(GCE_KEY, "europe-west1-g"),
    ]


# csi-translation-lib's TestTranslateTopologyFromInTreeToCSI (in_tree_volume_test.go).
@pytest.mark.parametrize(
    ("zone_key", "region_key", "zone", "region"),
    [
        pytest.param(GA_ZONE, GA_REGION, "us-east1-a", "us-east1", id="ga"),
        pytest.param(BETA_ZONE, BETA_REGION, "us-west2-b", "us-west2", id="beta-region-to-ga"),
    ],
)
def test_the_region_moves_to_the_ga_key_beside_the_zone(
    zone_key: str, region_key: str, zone: str, region: str
) -> None:
    affinity = term((zone_key, "In", [zone]), (region_key, "In", [region]))
    pv = in_tree_pv(GCE, {GA_ZONE: "us-east1-a", GA_REGION: "us-east1"}, affinity)
    assert terms_of(translate_pv_to_csi(pv)) == [
        term((GCE_KEY, "In", [zone]), (GA_REGION, "In", [region]))
    ]


def test_zones_from_the_label_join_every_term_trimmed_deduplicated_and_sorted() -> None:
    pv = in_tree_pv(EBS, {GA_ZONE: "b__ a__a__"}, term(("x", "Exists", [])), term())
    assert terms_of(translate_pv_to_csi(pv)) == [
        term(("x", "Exists", []), (EBS_KEY, "In", ["a", "b"])),
        zone_in(EBS_KEY, "a", "b"),
    ]


def test_a_zone_expression_without_values_stays_and_the_label_is_added() -> None:
    pv = in_tree_pv(EBS, {GA_ZONE: "a"}, term((GA_ZONE, "Exists", [])))
    assert terms_of(translate_pv_to_csi(pv)) == [
        term((GA_ZONE, "Exists", []), (EBS_KEY, "In", ["a"]))
    ]


@pytest.mark.parametrize("labels", [None, {GA_ZONE: ""}, {GA_REGION: "r"}])
def test_without_zones_to_add_the_pv_keeps_no_affinity(labels: dict[str, str] | None) -> None:
    translated = translate_pv_to_csi(in_tree_pv(GCE, labels))
    assert "nodeAffinity" not in translated["spec"]


def test_the_translation_swaps_the_source_and_leaves_the_pv_alone() -> None:
    pv = in_tree_pv(GCE, BETA_LABELS, zone_in(BETA_ZONE, "us-east-1a"))
    translated = translate_pv_to_csi(pv)
    assert "gcePersistentDisk" not in translated["spec"]
    assert translated["spec"]["csi"] == {
        "driver": "pd.csi.storage.gke.io",
        "volumeHandle": "projects/UNSPECIFIED/zones/us-east-1a/disks/test-disk",
    }
    assert terms_of(pv) == [zone_in(BETA_ZONE, "us-east-1a")]
    assert pv["spec"]["gcePersistentDisk"] == GCE[1]


@pytest.mark.parametrize(
    "source",
    [
        ("azureDisk", {"diskName": "d", "diskURI": "uri"}),
        ("portworxVolume", {"volumeID": "p"}),
    ],
)
def test_azure_disk_and_portworx_keep_their_affinity(source: tuple[str, dict[str, Any]]) -> None:
    pv = in_tree_pv(source, BETA_LABELS, zone_in(BETA_ZONE, "a"))
    assert terms_of(translate_pv_to_csi(pv)) == [zone_in(BETA_ZONE, "a")]
    assert "nodeAffinity" not in translate_pv_to_csi(in_tree_pv(source, BETA_LABELS))["spec"]


@pytest.mark.parametrize(
    ("pv", "message"),
    [
        pytest.param(
            in_tree_pv(GCE, {GA_ZONE: "us-east1-a__us-central1-a"}),
            "failed to get region from zones: multiple or no regions gotten from zones, got: "
            "map[us-central1:{} us-east1:{}]",
            id="gce-zones-of-two-regions",
        ),
        pytest.param(
            in_tree_pv(("azureDisk", {"diskName": "d", "diskURI": "u", "kind": "Shared"})),
            "kind(Shared) is not supported in csi migration",
            id="unmanaged-azure-disk",
        ),
    ],
)
def test_translation_failures_keep_upstreams_words(pv: dict[str, Any], message: str) -> None:
    with pytest.raises(TranslationError) as raised:
        translate_pv_to_csi(pv)
    assert str(raised.value) == message


def migrated_csi_node(plugins: str | None) -> dict[str, Any]:
    csi_node = make_csi_node("n1")
    if plugins is not None:
        csi_node["metadata"]["annotations"] = {MIGRATED_PLUGINS_ANNOTATION: plugins}
    return csi_node


@pytest.mark.parametrize(
    ("plugins", "plugin", "migrated"),
    [
        ("kubernetes.io/gce-pd", "kubernetes.io/gce-pd", True),
        ("kubernetes.io/aws-ebs,kubernetes.io/gce-pd", "kubernetes.io/gce-pd", True),
        # Items are taken as written: upstream trims no spaces.
        ("kubernetes.io/aws-ebs, kubernetes.io/gce-pd", "kubernetes.io/gce-pd", False),
        ("kubernetes.io/aws-ebs", "kubernetes.io/gce-pd", False),
        ("", "kubernetes.io/gce-pd", False),
        (None, "kubernetes.io/gce-pd", False),
        # Translatable, but never migrated by the scheduler.
        ("kubernetes.io/vsphere-volume", "kubernetes.io/vsphere-volume", False),
        ("kubernetes.io/azure-file", "kubernetes.io/azure-file", False),
        ("kubernetes.io/portworx-volume", "kubernetes.io/portworx-volume", True),
    ],
)
def test_which_csi_nodes_migrated_a_plugin(
    plugins: str | None, plugin: str, migrated: bool
) -> None:
    assert migrated_on_node(migrated_csi_node(plugins), plugin) is migrated


def test_a_node_without_a_csi_node_migrated_nothing() -> None:
    assert not migrated_on_node(None, "kubernetes.io/gce-pd")
