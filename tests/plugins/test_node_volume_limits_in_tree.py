"""In-tree volumes translated to the CSI driver and volume handle upstream's csi-translation-lib
gives them, and the scheduler's view of which plugins are migrated."""

from __future__ import annotations

from typing import Any

import pytest

from plugins.helpers.csi_migration import TranslationError
from plugins.helpers.csi_migration import csi_driver_of
from plugins.helpers.csi_migration import inline_plugin
from plugins.helpers.csi_migration import is_migratable_provisioner
from plugins.helpers.csi_migration import migration_on
from plugins.helpers.csi_migration import pv_plugin
from plugins.helpers.csi_migration import translate_inline
from plugins.helpers.csi_migration import translate_pv

EBS = "ebs.csi.aws.com"
GCE = "pd.csi.storage.gke.io"
AZURE_DISK = "disk.csi.azure.com"
AZURE_FILE = "file.csi.azure.com"
CINDER = "cinder.csi.openstack.org"
VSPHERE = "csi.vsphere.vmware.com"
PORTWORX = "pxd.portworx.com"

BETA_ZONE = "failure-domain.beta.kubernetes.io/zone"
GA_ZONE = "topology.kubernetes.io/zone"

EBS_ID = "vol-02399794d890f9375"
DISK_URI = "/subscriptions/12/resourceGroups/23/providers/Microsoft.Compute/disks/name"
VMDK = "[vsanDatastore] 6785a85e-268e-6352-a2e8-02008b7afadd/kubernetes-dynamic-pvc-68734c9f.vmdk"

# One source of each migratable type, with the in-tree plugin and CSI driver it belongs to.
SOURCES: list[tuple[str, dict[str, Any], str, str]] = [
    ("awsElasticBlockStore", {"volumeID": EBS_ID}, "kubernetes.io/aws-ebs", EBS),
    ("gcePersistentDisk", {"pdName": "foo"}, "kubernetes.io/gce-pd", GCE),
    ("azureDisk", {"diskName": "d", "diskURI": DISK_URI}, "kubernetes.io/azure-disk", AZURE_DISK),
    (
        "azureFile",
        {"secretName": "s", "shareName": "sh", "secretNamespace": "ns"},
        "kubernetes.io/azure-file",
        AZURE_FILE,
    ),
    ("cinder", {"volumeID": "c-1"}, "kubernetes.io/cinder", CINDER),
    ("vsphereVolume", {"volumePath": VMDK}, "kubernetes.io/vsphere-volume", VSPHERE),
    ("portworxVolume", {"volumeID": "ID"}, "kubernetes.io/portworx-volume", PORTWORX),
]
SOURCE_IDS = [field for field, *_ in SOURCES]
PLUGINS = [plugin for *_, plugin, _driver in SOURCES]

NOT_MIGRATABLE: list[dict[str, Any]] = [
    {"emptyDir": {}},
    {"hostPath": {"path": "/data"}},
    {"nfs": {"server": "nfs.example", "path": "/export"}},
    {"configMap": {"name": "cm"}},
    {"persistentVolumeClaim": {"claimName": "c"}},
    {"csi": {"driver": EBS, "volumeHandle": EBS_ID}},
    {"iscsi": {"targetPortal": "1.2.3.4:3260", "iqn": "iqn.x", "lun": 0}},
]


def volume(name: str = "vol", **source: Any) -> dict[str, Any]:
    return {"name": name, **source}


def persistent_volume(
    name: str = "pv",
    *,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    claim_namespace: str | None = None,
    **source: Any,
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": name}
    if labels is not None:
        metadata["labels"] = labels
    if annotations is not None:
        metadata["annotations"] = annotations
    spec: dict[str, Any] = {"accessModes": ["ReadWriteOnce"], **source}
    if claim_namespace is not None:
        spec["claimRef"] = {"name": "claim", "namespace": claim_namespace}
    return {"metadata": metadata, "spec": spec}


def volume_with(field: str, source: dict[str, Any]) -> dict[str, Any]:
    return {"name": "vol", field: source}


def pv_with(field: str, source: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": "pv"}, "spec": {field: source}}


def inline_error(vol: dict[str, Any], namespace: str = "") -> str:
    with pytest.raises(TranslationError) as caught:
        translate_inline(vol, namespace)
    return str(caught.value)


def pv_error(pv: dict[str, Any]) -> str:
    with pytest.raises(TranslationError) as caught:
        translate_pv(pv)
    return str(caught.value)


# --- recognition ---------------------------------------------------------------------------


@pytest.mark.parametrize(("field", "source", "plugin", "driver"), SOURCES, ids=SOURCE_IDS)
def test_inline_plugin_names_each_migratable_source(
    field: str, source: dict[str, Any], plugin: str, driver: str
) -> None:
    assert inline_plugin(volume_with(field, source)) == plugin


@pytest.mark.parametrize(("field", "source", "plugin", "driver"), SOURCES, ids=SOURCE_IDS)
def test_pv_plugin_names_each_migratable_source(
    field: str, source: dict[str, Any], plugin: str, driver: str
) -> None:
    assert pv_plugin(pv_with(field, source)) == plugin


@pytest.mark.parametrize("source", NOT_MIGRATABLE, ids=lambda s: next(iter(s)))
def test_other_volume_types_are_not_migratable(source: dict[str, Any]) -> None:
    assert inline_plugin(volume(**source)) is None
    assert pv_plugin(persistent_volume(**source)) is None


def test_an_empty_source_is_still_that_source_and_a_null_one_is_none() -> None:
    # Upstream tests the source pointer for nil: {} is a source, null is not.
    assert inline_plugin(volume(awsElasticBlockStore={})) == "kubernetes.io/aws-ebs"
    assert inline_plugin(volume(awsElasticBlockStore=None)) is None
    assert pv_plugin(persistent_volume(cinder={})) == "kubernetes.io/cinder"
    assert pv_plugin({"metadata": {"name": "pv"}}) is None


@pytest.mark.parametrize("plugin", PLUGINS)
def test_in_tree_plugins_are_migratable_provisioners(plugin: str) -> None:
    assert is_migratable_provisioner(plugin)


@pytest.mark.parametrize(
    "provisioner",
    [EBS, "kubernetes.io/rbd", "kubernetes.io/glusterfs", "kubernetes.io/no-provisioner", ""],
)
def test_other_provisioners_are_not_migratable(provisioner: str) -> None:
    assert not is_migratable_provisioner(provisioner)


@pytest.mark.parametrize(("field", "source", "plugin", "driver"), SOURCES, ids=SOURCE_IDS)
def test_csi_driver_of_each_plugin(
    field: str, source: dict[str, Any], plugin: str, driver: str
) -> None:
    assert csi_driver_of(plugin) == driver


def test_csi_driver_of_an_unknown_plugin_fails_with_upstream_text() -> None:
    with pytest.raises(TranslationError) as caught:
        csi_driver_of("kubernetes.io/rbd")
    assert str(caught.value) == "could not find CSI Driver name for plugin kubernetes.io/rbd"


# --- migration_on --------------------------------------------------------------------------


@pytest.mark.parametrize("plugin", PLUGINS)
def test_migration_is_off_without_a_csi_node(plugin: str) -> None:
    assert not migration_on(None, plugin)


@pytest.mark.parametrize(
    ("plugin", "on"),
    [
        ("kubernetes.io/aws-ebs", True),
        ("kubernetes.io/gce-pd", True),
        ("kubernetes.io/azure-disk", True),
        ("kubernetes.io/cinder", True),
        ("kubernetes.io/portworx-volume", True),
        ("kubernetes.io/azure-file", False),
        ("kubernetes.io/vsphere-volume", False),
        ("kubernetes.io/rbd", False),
        ("", False),
    ],
)
def test_migration_on_with_a_csi_node(plugin: str, on: bool) -> None:
    csi_node = {"metadata": {"name": "node-1"}, "spec": {"drivers": []}}
    assert migration_on(csi_node, plugin) is on
    # Nothing in the CSINode is looked at, annotations included.
    assert migration_on({}, plugin) is on


# --- every plugin --------------------------------------------------------------------------


@pytest.mark.parametrize(("field", "source", "plugin", "driver"), SOURCES, ids=SOURCE_IDS)
def test_translations_use_the_plugins_csi_driver(
    field: str, source: dict[str, Any], plugin: str, driver: str
) -> None:
    inline = translate_inline(volume_with(field, source), "ns")
    assert inline is not None
    assert inline[0] == driver
    assert translate_pv(pv_with(field, source))[0] == driver


def test_translating_a_non_migratable_inline_volume_fails_with_upstream_text() -> None:
    assert inline_error(volume("scratch", emptyDir={})) == (
        'could not find in-tree plugin translation logic for "scratch"'
    )


def test_translating_a_non_migratable_pv_fails_with_upstream_text() -> None:
    pv = persistent_volume("nfs-pv", nfs={"server": "s", "path": "/"})
    assert pv_error(pv) == 'could not find in-tree plugin translation logic for "nfs-pv"'


def test_a_volume_no_translator_knows_is_named_in_the_error() -> None:
    assert inline_error(volume("scratch", hostPath={"path": "/"})) == (
        'could not find in-tree plugin translation logic for "scratch"'
    )


# --- aws-ebs -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("volume_id", "handle"),
    [
        (EBS_ID, EBS_ID),
        (f"aws:///{EBS_ID}", EBS_ID),
        (f"aws://us-west-2a/{EBS_ID}", EBS_ID),
        ("aws://us-east-1a/vol-123", "vol-123"),
        # The handle is the URL's path: query and fragment are cut off, escapes decoded.
        ("aws://us-east-1a/vol-123?x=1", "vol-123"),
        ("aws://us-east-1a/vol-123#frag", "vol-123"),
        ("aws://us-east-1a/vol-%41bc", "vol-Abc"),
        ("aws://us-east-1a//vol-123//", "vol-123"),
        ("aws://user:pw@us-east-1a:443/vol-123", "vol-123"),
        ("aws://[::1]/vol-123", "vol-123"),
        # Only a lower-case "aws://" is parsed; anything else is a bare ID, kept as it is.
        ("AWS://us-east-1a/vol-123", "AWS://us-east-1a/vol-123"),
        ("projects/x/anything", "projects/x/anything"),
        ("", ""),
    ],
)
def test_ebs_volume_handles(volume_id: str, handle: str) -> None:
    source = {"volumeID": volume_id, "fsType": "ext4", "partition": 1}
    assert translate_inline(volume(awsElasticBlockStore=source), "") == (EBS, handle)
    assert translate_pv(persistent_volume(awsElasticBlockStore=source)) == (EBS, handle)


EBS_PREFIX = "failed to translate Kubernetes ID to EBS Volume ID "


@pytest.mark.parametrize(
    ("volume_id", "reason"),
    [
        (
            "aws://us-west-2a/02399794d890f9375",
            "Invalid format for AWS volume (aws://us-west-2a/02399794d890f9375)",
        ),
        ("aws://us-east-1a", "Invalid format for AWS volume (aws://us-east-1a)"),
        ("aws://z/vol-1/extra", "Invalid format for AWS volume (aws://z/vol-1/extra)"),
        # An escaped slash is a slash once decoded.
        ("aws://z/vol-%2F1", "Invalid format for AWS volume (aws://z/vol-%2F1)"),
    ],
)
def test_ebs_volume_ids_upstream_rejects(volume_id: str, reason: str) -> None:
    source = {"volumeID": volume_id}
    assert inline_error(volume(awsElasticBlockStore=source)) == EBS_PREFIX + reason
    assert pv_error(persistent_volume(awsElasticBlockStore=source)) == EBS_PREFIX + reason


@pytest.mark.parametrize("volume_id", ["aws://z:1a/vol-1", "aws://z/vol-1\t", "aws://[::1/vol-1"])
def test_an_ebs_volume_id_that_is_no_url_fails_as_an_invalid_disk_name(volume_id: str) -> None:
    # Upstream's reason is Go's URL parser's; ours is Python's. The verdict is the same.
    error = inline_error(volume(awsElasticBlockStore={"volumeID": volume_id}))
    assert error.startswith(f"{EBS_PREFIX}Invalid disk name ({volume_id}): ")


# --- gce-pd --------------------------------------------------------------------------------


def test_gce_inline_handle_names_no_project_or_zone() -> None:
    vol = volume(gcePersistentDisk={"pdName": "foo", "readOnly": True, "partition": 2})
    assert translate_inline(vol, "ns") == (GCE, "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/foo")


@pytest.mark.parametrize(
    ("labels", "handle"),
    [
        ({BETA_ZONE: "us-east1-a"}, "projects/UNSPECIFIED/zones/us-east1-a/disks/pd-name"),
        ({GA_ZONE: "us-east1-a"}, "projects/UNSPECIFIED/zones/us-east1-a/disks/pd-name"),
        (
            {BETA_ZONE: "us-central1-a__us-central1-c"},
            "projects/UNSPECIFIED/regions/us-central1/disks/pd-name",
        ),
        (
            {GA_ZONE: "us-central1-a__us-central1-c"},
            "projects/UNSPECIFIED/regions/us-central1/disks/pd-name",
        ),
        # The beta label wins over the GA one, unless it is empty.
        (
            {BETA_ZONE: "us-east1-b", GA_ZONE: "europe-west1-c"},
            "projects/UNSPECIFIED/zones/us-east1-b/disks/pd-name",
        ),
        (
            {BETA_ZONE: "", GA_ZONE: "europe-west1-c"},
            "projects/UNSPECIFIED/zones/europe-west1-c/disks/pd-name",
        ),
        # A single zone is taken as it is, well-formed or not.
        ({GA_ZONE: "nowhere"}, "projects/UNSPECIFIED/zones/nowhere/disks/pd-name"),
        ({}, "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/pd-name"),
        ({GA_ZONE: ""}, "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/pd-name"),
        (
            {"topology.kubernetes.io/region": "us-east1"},
            "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/pd-name",
        ),
    ],
)
def test_gce_pv_handles(labels: dict[str, str], handle: str) -> None:
    pv = persistent_volume(labels=labels, gcePersistentDisk={"pdName": "pd-name"})
    assert translate_pv(pv) == (GCE, handle)


def test_gce_pv_without_labels_at_all() -> None:
    pv = {"metadata": {"name": "pv"}, "spec": {"gcePersistentDisk": {"pdName": "d"}}}
    assert translate_pv(pv) == (GCE, "projects/UNSPECIFIED/zones/UNSPECIFIED/disks/d")


@pytest.mark.parametrize(
    ("zones", "reason"),
    [
        (
            "us-central1-a__us-east1-b",
            "multiple or no regions gotten from zones, got: map[us-central1:{} us-east1:{}]",
        ),
        (
            "us-east1-b__europe-west1-c__us-central1-a",
            "multiple or no regions gotten from zones, got: "
            "map[europe-west1:{} us-central1:{} us-east1:{}]",
        ),
        (
            "us-central1-a__central1",
            "zone in unexpected format, expected: {locale}-{region}-{zone}, got: central1",
        ),
        (
            "us-central1-a__",
            "zone in unexpected format, expected: {locale}-{region}-{zone}, got: ",
        ),
    ],
)
def test_gce_pv_regional_zones_upstream_rejects(zones: str, reason: str) -> None:
    pv = persistent_volume(labels={GA_ZONE: zones}, gcePersistentDisk={"pdName": "d"})
    assert pv_error(pv) == "failed to get region from zones: " + reason


# --- azure-disk ----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", [None, "Managed", "managed", "MANAGED"])
def test_azure_disk_handle_is_the_disk_uri(kind: str | None) -> None:
    source: dict[str, Any] = {
        "diskName": "name",
        "diskURI": DISK_URI,
        "cachingMode": "ReadOnly",
        "fsType": "ext4",
        "readOnly": True,
    }
    if kind is not None:
        source["kind"] = kind
    assert translate_inline(volume(azureDisk=source), "") == (AZURE_DISK, DISK_URI)
    assert translate_pv(persistent_volume(azureDisk=source)) == (AZURE_DISK, DISK_URI)


def test_azure_disk_handle_is_not_validated() -> None:
    source = {"diskName": "diskname", "diskURI": "datadiskuri"}
    assert translate_inline(volume(azureDisk=source), "") == (AZURE_DISK, "datadiskuri")


@pytest.mark.parametrize("kind", ["Dedicated", "Shared", ""])
def test_azure_disk_of_unmanaged_kind_fails(kind: str) -> None:
    source = {"diskName": "name", "diskURI": DISK_URI, "kind": kind}
    reason = f"kind({kind}) is not supported in csi migration"
    assert inline_error(volume(azureDisk=source)) == reason
    assert pv_error(persistent_volume(azureDisk=source)) == reason


# --- azure-file ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("secret", "namespace", "handle"),
    [
        ("secretname", "", "#secretname#sharename#name#default"),
        ("secretname", "test", "#secretname#sharename#name#test"),
        # The storage account is read from the conventional secret name.
        ("azure-storage-account-st-secret", "test", "#st#sharename#name#test"),
        ("azure-storage-account-a-secret-b-secret", "", "#a-secret-b#sharename#name#default"),
    ],
)
def test_azure_file_inline_handles(secret: str, namespace: str, handle: str) -> None:
    vol = volume(
        "name", azureFile={"secretName": secret, "shareName": "sharename", "readOnly": True}
    )
    assert translate_inline(vol, namespace) == (AZURE_FILE, handle)


@pytest.mark.parametrize(
    ("pv", "handle"),
    [
        (
            persistent_volume(
                "uuid",
                azureFile={
                    "shareName": "sharename",
                    "secretName": "secretname",
                    "secretNamespace": "secretnamespace",
                },
            ),
            "#secretname#sharename#uuid#secretnamespace",
        ),
        (
            persistent_volume(
                "uuid",
                annotations={"kubernetes.io/azure-file-resource-group": "rg"},
                azureFile={
                    "shareName": "sharename",
                    "secretName": "secretname",
                    "secretNamespace": "secretnamespace",
                },
            ),
            "rg#secretname#sharename#uuid#secretnamespace",
        ),
        # Without a secret namespace in the source, the claim's namespace is the secret's.
        (
            persistent_volume(
                "uuid",
                annotations={"kubernetes.io/azure-file-resource-group": "rg"},
                claim_namespace="secretnamespace",
                azureFile={"shareName": "sharename", "secretName": "secretname"},
            ),
            "rg#secretname#sharename#uuid#secretnamespace",
        ),
        (
            persistent_volume(
                "uuid",
                claim_namespace="claims",
                azureFile={
                    "shareName": "share",
                    "secretName": "azure-storage-account-acct-secret",
                    "secretNamespace": "secrets",
                },
            ),
            "#acct#share#uuid#secrets",
        ),
    ],
)
def test_azure_file_pv_handles(pv: dict[str, Any], handle: str) -> None:
    assert translate_pv(pv) == (AZURE_FILE, handle)


@pytest.mark.parametrize(
    "pv",
    [
        persistent_volume(
            "uuid",
            annotations={"kubernetes.io/azure-file-resource-group": "rg"},
            azureFile={"shareName": "sharename", "secretName": "secretname", "readOnly": True},
        ),
        # A secret namespace set, even to "", is the one used: the claim's is not looked at.
        persistent_volume(
            "uuid",
            claim_namespace="claims",
            azureFile={"shareName": "s", "secretName": "x", "secretNamespace": ""},
        ),
    ],
)
def test_azure_file_pv_without_a_secret_namespace_fails(pv: dict[str, Any]) -> None:
    assert pv_error(pv) == (
        "could not find a secret namespace in PersistentVolumeSource or ClaimRef"
    )


# --- cinder, vsphere-volume, portworx-volume ----------------------------------------------


def test_cinder_handle_is_the_volume_id() -> None:
    source = {"volumeID": "8f2b7e4c-volume", "fsType": "ext4"}
    assert translate_inline(volume(cinder=source), "") == (CINDER, "8f2b7e4c-volume")
    pv = persistent_volume(labels={BETA_ZONE: "nova"}, cinder=source)
    assert translate_pv(pv) == (CINDER, "8f2b7e4c-volume")


def test_vsphere_handle_is_the_volume_path() -> None:
    inline = volume(
        "inlinevolume",
        vsphereVolume={"volumePath": "[vsanDatastore] volume/inlinevolume.vmdk", "fsType": "ext4"},
    )
    assert translate_inline(inline, "") == (VSPHERE, "[vsanDatastore] volume/inlinevolume.vmdk")
    pv = persistent_volume(
        "pvc-d8b4475f",
        labels={BETA_ZONE: "z1", "failure-domain.beta.kubernetes.io/region": "r1"},
        vsphereVolume={
            "volumePath": VMDK,
            "fsType": "ext4",
            "storagePolicyName": "vSAN Default Storage Policy",
        },
    )
    assert translate_pv(pv) == (VSPHERE, VMDK)


def test_portworx_handle_is_the_volume_id() -> None:
    inline = volume("PortworxVol", portworxVolume={"volumeID": "ID", "fsType": "type"})
    assert translate_inline(inline, "ns") == (PORTWORX, "ID")
    pv = persistent_volume(
        "pxd.portworx.com",
        annotations={
            "openstorage.io/auth-secret-name": "test-secret",
            "openstorage.io/auth-secret-namespace": "test-namespace",
        },
        claim_namespace="default",
        portworxVolume={"volumeID": "ID1111", "fsType": "type"},
    )
    assert translate_pv(pv) == (PORTWORX, "ID1111")
