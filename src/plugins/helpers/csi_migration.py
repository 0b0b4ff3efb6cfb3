"""In-tree volumes as the CSI volumes they migrate to (CSI migration).

Since CSI migration, a volume of an in-tree type (`awsElasticBlockStore`, `gcePersistentDisk`,
...) is attached by the CSI driver that replaced its plugin. Two plugins look at it that way, each
through a part of what k8s.io/csi-translation-lib (v0.36.3) makes of it:

- NodeVolumeLimits counts such volumes, inline in a pod or behind a PersistentVolume, under the
  driver and volume handle the translation gives them (a handle that differs from upstream's
  would count one volume twice or two as one);
- VolumeBinding checks a bound in-tree PV's node affinity as the translated PV has it, with the
  zone key of the CSI driver's topology (`translate_pv_to_csi`).

Nothing else of the translated PV (attributes, secrets, access modes) is reproduced.

The seven migratable plugins: aws-ebs, gce-pd, azure-disk, azure-file, cinder, vsphere-volume and
portworx-volume. Errors carry upstream's text, because the scheduler puts them in statuses; the
one exception is the reason an EBS volume ID that is no URL at all is refused for, which is
Python's URL parser's rather than Go's.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Callable
from collections.abc import Mapping
from typing import Any

from plugins.helpers.csi_topology import zone_affinity_for_csi
from scheduler.objects.node import BETA_ZONE_LABEL
from scheduler.objects.node import ZONE_LABEL
from scheduler.objects.raw import annotations_of

# On a CSINode: the in-tree plugins whose volumes the node handles through their CSI driver,
# comma-separated.
MIGRATED_PLUGINS_ANNOTATION = "storage.alpha.kubernetes.io/migrated-plugins"


class TranslationError(Exception):
    """An in-tree volume upstream's translator fails on; the message is upstream's."""


# Volume source field (in a pod's volume or a PV's spec) -> (in-tree plugin, CSI driver).
_PLUGINS: dict[str, tuple[str, str]] = {
    "awsElasticBlockStore": ("kubernetes.io/aws-ebs", "ebs.csi.aws.com"),
    "gcePersistentDisk": ("kubernetes.io/gce-pd", "pd.csi.storage.gke.io"),
    "azureDisk": ("kubernetes.io/azure-disk", "disk.csi.azure.com"),
    "azureFile": ("kubernetes.io/azure-file", "file.csi.azure.com"),
    "cinder": ("kubernetes.io/cinder", "cinder.csi.openstack.org"),
    "vsphereVolume": ("kubernetes.io/vsphere-volume", "csi.vsphere.vmware.com"),
    "portworxVolume": ("kubernetes.io/portworx-volume", "pxd.portworx.com"),
}
_DRIVERS = dict(_PLUGINS.values())

# CSI driver -> its zone topology key, for the drivers whose PV translation moves the PV's zone
# affinity to it. Azure Disk's and Portworx's leave the affinity as it is; vSphere's own zone and
# region rewrite is not reproduced, no scheduler path translating a vSphere PV.
_ZONE_TOPOLOGY_KEYS = {
    "pd.csi.storage.gke.io": "topology.gke.io/zone",
    "ebs.csi.aws.com": "topology.ebs.csi.aws.com/zone",
    "cinder.csi.openstack.org": "topology.cinder.csi.openstack.org/zone",
}

# The scheduler's own list (not the translator's, upstream's isCSIMigrationOnForPlugin in both
# NodeVolumeLimits and VolumeBinding): azure-file and vsphere-volume are translatable, but the
# scheduler never treats them as migrated.
_MIGRATION_ON = frozenset(
    {
        "kubernetes.io/aws-ebs",
        "kubernetes.io/gce-pd",
        "kubernetes.io/azure-disk",
        "kubernetes.io/cinder",
        "kubernetes.io/portworx-volume",
    }
)


def inline_plugin(volume: Mapping[str, Any]) -> str | None:
    """The in-tree plugin name (e.g. "kubernetes.io/aws-ebs") of a pod's volume entry
    (an item of spec.volumes) when it is inline-migratable (upstream IsInlineMigratable),
    else None."""
    field = _source_field(volume)
    return None if field is None else _PLUGINS[field][0]


def pv_plugin(pv: Mapping[str, Any]) -> str | None:
    """The in-tree plugin name of a PersistentVolume whose source is migratable
    (IsPVMigratable), else None."""
    field = _source_field(pv.get("spec") or {})
    return None if field is None else _PLUGINS[field][0]


def is_migratable_provisioner(provisioner: str) -> bool:
    """Whether a StorageClass provisioner is an in-tree plugin with a CSI replacement."""
    return provisioner in _DRIVERS


def csi_driver_of(plugin: str) -> str:
    """The CSI driver that replaced an in-tree plugin."""
    try:
        return _DRIVERS[plugin]
    except KeyError:
        raise TranslationError(f"could not find CSI Driver name for plugin {plugin}") from None


def migration_on(csi_node: Mapping[str, Any] | None, plugin: str) -> bool:
    """Whether the scheduler counts the plugin's volumes as migrated on a node. Upstream only
    asks that the node have a CSINode: the migration feature gates are locked on."""
    return csi_node is not None and plugin in _MIGRATION_ON


def migrated_on_node(csi_node: Mapping[str, Any] | None, plugin: str) -> bool:
    """Whether VolumeBinding sees the plugin's PVs as migrated on a node: a plugin the scheduler
    migrates, named in the migrated-plugins annotation of the node's CSINode. The annotation is
    split at commas and its items taken as written: upstream trims no spaces."""
    if csi_node is None or plugin not in _MIGRATION_ON:
        return False
    listed = annotations_of(csi_node).get(MIGRATED_PLUGINS_ANNOTATION) or ""
    return plugin in listed.split(",")


def translate_inline(volume: Mapping[str, Any], namespace: str) -> tuple[str, str] | None:
    """(CSI driver, volume handle) of the translated inline volume, None when the translation has
    no CSI source (upstream then skips counting); raises TranslationError on a translation failure,
    with upstream's error text.

    None of the seven plugins translates to a PV without a CSI source, so this returns None only
    if a future plugin does."""
    field = _source_field(volume)
    if field is None:
        name = _text(volume, "name")
        raise TranslationError(f'could not find in-tree plugin translation logic for "{name}"')
    source = volume[field]
    return _PLUGINS[field][1], _INLINE_HANDLES[field](volume, source, namespace)


def translate_pv(pv: Mapping[str, Any]) -> tuple[str, str]:
    """(CSI driver, volume handle) of a migratable in-tree PV translated to CSI
    (TranslateInTreePVToCSI); raises TranslationError with upstream's text on failure."""
    spec = pv.get("spec") or {}
    field = _source_field(spec)
    if field is None:
        name = _text(pv.get("metadata") or {}, "name")
        raise TranslationError(f'could not find in-tree plugin translation logic for "{name}"')
    return _PLUGINS[field][1], _PV_HANDLES[field](pv, spec[field])


def translate_pv_to_csi(pv: Mapping[str, Any]) -> dict[str, Any]:
    """A migratable in-tree PV as TranslateInTreePVToCSI makes it, as far as the scheduler reads
    it: its in-tree source replaced by `spec.csi` (driver and volume handle) and, for GCE PD, AWS
    EBS and Cinder, its zone topology moved to the driver's key. Raises TranslationError with
    upstream's text; `pv` is left untouched."""
    driver, handle = translate_pv(pv)
    in_tree_source = _source_field(pv.get("spec") or {})
    spec = {key: value for key, value in (pv.get("spec") or {}).items() if key != in_tree_source}
    spec["csi"] = {"driver": driver, "volumeHandle": handle}
    zone_key = _ZONE_TOPOLOGY_KEYS.get(driver)
    if zone_key is not None:
        # The handle comes first: a disk that fails there is refused before its topology.
        affinity = zone_affinity_for_csi(pv, zone_key)
        if affinity is None:
            spec.pop("nodeAffinity", None)
        else:
            spec["nodeAffinity"] = affinity
    return {**pv, "spec": spec}


def _source_field(holder: Mapping[str, Any]) -> str | None:
    # A source counts when present, even empty ({}): upstream tests a pointer for nil. A
    # volume has one source; should it have several, the first in _PLUGINS' order wins (upstream
    # walks a Go map, in no set order).
    return next((field for field in _PLUGINS if holder.get(field) is not None), None)


def _text(mapping: Mapping[str, Any], key: str) -> str:
    value = mapping.get(key)
    return "" if value is None else str(value)


# --- aws-ebs -------------------------------------------------------------------------------


def _ebs_handle(source: Mapping[str, Any]) -> str:
    volume_id = _text(source, "volumeID")
    try:
        return _ebs_volume_id(volume_id)
    except TranslationError as err:
        raise TranslationError(
            f"failed to translate Kubernetes ID to EBS Volume ID {err}"
        ) from None


def _ebs_volume_id(kubernetes_id: str) -> str:
    # "vol-123" as it is; "aws://<zone>/vol-123" and "aws:///vol-123" by their URL path.
    if not kubernetes_id.startswith("aws://"):
        return kubernetes_id
    # Upstream parses the ID with Go's URL parser. Python's is more lenient, and words its
    # refusals otherwise: an ID that is no URL at all (a bad port, a control character)
    # fails here too, with Python's reason; what gets past both is judged alike below.
    try:
        parsed = urllib.parse.urlsplit(kubernetes_id)
        parsed.port  # noqa: B018 - reading it checks it
    except ValueError as err:
        raise TranslationError(f"Invalid disk name ({kubernetes_id}): {err}") from None
    if any(char < " " or char == "\x7f" for char in kubernetes_id):
        raise TranslationError(
            f"Invalid disk name ({kubernetes_id}): net/url: invalid control character in URL"
        )
    aws_id = urllib.parse.unquote(parsed.path).strip("/")
    if re.fullmatch(r"vol-[^/]*", aws_id) is None:
        raise TranslationError(f"Invalid format for AWS volume ({kubernetes_id})")
    return aws_id


# --- gce-pd --------------------------------------------------------------------------------

_GCE_ZONAL = "projects/UNSPECIFIED/zones/{}/disks/{}"
_GCE_REGIONAL = "projects/UNSPECIFIED/regions/{}/disks/{}"


def _gce_inline_handle(source: Mapping[str, Any]) -> str:
    # An inline disk names no zone: the CSI driver repairs the handle from the node's.
    return _GCE_ZONAL.format("UNSPECIFIED", _text(source, "pdName"))


def _gce_pv_handle(pv: Mapping[str, Any], source: Mapping[str, Any]) -> str:
    # The zone(s) come from the PV's labels, beta label first; "__" joins a regional disk's.
    labels = (pv.get("metadata") or {}).get("labels") or {}
    zones_label = labels.get(BETA_ZONE_LABEL) or ""
    if not zones_label:
        zones_label = labels.get(ZONE_LABEL) or ""
    zones = str(zones_label).split("__")
    pd_name = _text(source, "pdName")
    if len(zones) == 1 and zones[0]:
        return _GCE_ZONAL.format(zones[0], pd_name)
    if len(zones) > 1:
        try:
            region = _gce_region(zones)
        except TranslationError as err:
            raise TranslationError(f"failed to get region from zones: {err}") from None
        return _GCE_REGIONAL.format(region, pd_name)
    return _GCE_ZONAL.format("UNSPECIFIED", pd_name)


def _gce_region(zones: list[str]) -> str:
    regions: set[str] = set()
    for zone in zones:
        parts = zone.split("-")
        if len(parts) != 3:
            raise TranslationError(
                "zone in unexpected format, expected: {locale}-{region}-{zone}, got: " + zone
            )
        regions.add(f"{parts[0]}-{parts[1]}")
    if len(regions) != 1:
        # Go prints the set as a map, keys sorted: map[a:{} b:{}].
        shown = " ".join(f"{region}:{{}}" for region in sorted(regions))
        raise TranslationError(f"multiple or no regions gotten from zones, got: map[{shown}]")
    return regions.pop()


# --- azure-disk ----------------------------------------------------------------------------


def _azure_disk_handle(source: Mapping[str, Any]) -> str:
    # Only managed disks migrate; an explicit kind other than Managed (any case) fails, an
    # explicit empty one too.
    kind = source.get("kind")
    if kind is not None and str(kind).lower() != "managed":
        raise TranslationError(f"kind({kind}) is not supported in csi migration")
    return _text(source, "diskURI")


# --- azure-file ----------------------------------------------------------------------------

_AZURE_FILE_SECRET = re.compile(r"azure-storage-account-(.+)-secret")


def _azure_file_account(secret_name: str) -> str:
    # The storage account is read from the conventional secret name; any other secret name is
    # taken as the account itself.
    match = _AZURE_FILE_SECRET.search(secret_name)
    return secret_name if match is None else match.group(1)


def _azure_file_inline_handle(
    volume: Mapping[str, Any], source: Mapping[str, Any], namespace: str
) -> str:
    account = _azure_file_account(_text(source, "secretName"))
    secret_namespace = namespace or "default"
    share = _text(source, "shareName")
    return f"#{account}#{share}#{_text(volume, 'name')}#{secret_namespace}"


def _azure_file_pv_handle(pv: Mapping[str, Any], source: Mapping[str, Any]) -> str:
    metadata = pv.get("metadata") or {}
    account = _azure_file_account(_text(source, "secretName"))
    annotations = metadata.get("annotations") or {}
    resource_group = _text(annotations, "kubernetes.io/azure-file-resource-group")
    # The source's secretNamespace when set at all (even to ""), else the claim's namespace.
    if source.get("secretNamespace") is not None:
        namespace = _text(source, "secretNamespace")
    else:
        namespace = _text((pv.get("spec") or {}).get("claimRef") or {}, "namespace")
    if not namespace:
        raise TranslationError(
            "could not find a secret namespace in PersistentVolumeSource or ClaimRef"
        )
    share = _text(source, "shareName")
    return f"{resource_group}#{account}#{share}#{_text(metadata, 'name')}#{namespace}"


_INLINE_HANDLES: dict[str, Callable[[Mapping[str, Any], Mapping[str, Any], str], str]] = {
    "awsElasticBlockStore": lambda _volume, source, _ns: _ebs_handle(source),
    "gcePersistentDisk": lambda _volume, source, _ns: _gce_inline_handle(source),
    "azureDisk": lambda _volume, source, _ns: _azure_disk_handle(source),
    "azureFile": _azure_file_inline_handle,
    "cinder": lambda _volume, source, _ns: _text(source, "volumeID"),
    "vsphereVolume": lambda _volume, source, _ns: _text(source, "volumePath"),
    "portworxVolume": lambda _volume, source, _ns: _text(source, "volumeID"),
}

_PV_HANDLES: dict[str, Callable[[Mapping[str, Any], Mapping[str, Any]], str]] = {
    "awsElasticBlockStore": lambda _pv, source: _ebs_handle(source),
    "gcePersistentDisk": _gce_pv_handle,
    "azureDisk": lambda _pv, source: _azure_disk_handle(source),
    "azureFile": _azure_file_pv_handle,
    "cinder": lambda _pv, source: _text(source, "volumeID"),
    "vsphereVolume": lambda _pv, source: _text(source, "volumePath"),
    "portworxVolume": lambda _pv, source: _text(source, "volumeID"),
}
