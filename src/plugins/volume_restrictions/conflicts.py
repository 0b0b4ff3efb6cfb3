"""Same-disk conflicts of the legacy in-tree volume types (GCE PD, AWS EBS, iSCSI, Ceph RBD).

Two pods on one node may not use the same disk, except that GCE PD, iSCSI and RBD allow it
when every user mounts it read-only. AWS EBS forbids any sharing.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from plugins.helpers.volumes import pod_volumes
from scheduler.framework import NodeInfo
from scheduler.framework import Pod

RawVolume = Mapping[str, Any]

# The API server defaults an RBD volume's pool to "rbd".
_DEFAULT_RBD_POOL = "rbd"


def needs_restrictions_check(volume: RawVolume) -> bool:
    return any(volume.get(source) is not None for source, _ in _SAME_DISK)


def restricted_volumes(pod: Pod) -> tuple[RawVolume, ...]:
    return tuple(v for v in pod_volumes(pod) if needs_restrictions_check(v))


def _both_read_only(a: RawVolume, b: RawVolume) -> bool:
    return bool(a.get("readOnly")) and bool(b.get("readOnly"))


def _same_gce_disk(disk: RawVolume, other: RawVolume) -> bool:
    return disk.get("pdName") == other.get("pdName") and not _both_read_only(disk, other)


def _same_ebs_volume(volume: RawVolume, other: RawVolume) -> bool:
    return bool(volume.get("volumeID") == other.get("volumeID"))


def _same_iscsi_target(target: RawVolume, other: RawVolume) -> bool:
    return target.get("iqn") == other.get("iqn") and not _both_read_only(target, other)


def _same_rbd_image(image: RawVolume, other: RawVolume) -> bool:
    """The same image: a shared Ceph monitor, the same pool and the same image name."""
    shared_monitor = bool(set(image.get("monitors") or ()) & set(other.get("monitors") or ()))
    pool = image.get("pool") or _DEFAULT_RBD_POOL
    other_pool = other.get("pool") or _DEFAULT_RBD_POOL
    return (
        shared_monitor
        and pool == other_pool
        and image.get("image") == other.get("image")
        and not _both_read_only(image, other)
    )


_SAME_DISK = (
    ("gcePersistentDisk", _same_gce_disk),
    ("awsElasticBlockStore", _same_ebs_volume),
    ("iscsi", _same_iscsi_target),
    ("rbd", _same_rbd_image),
)


def _same_disk(volume: RawVolume, existing: RawVolume) -> bool:
    for source, same in _SAME_DISK:
        mine, theirs = volume.get(source), existing.get(source)
        if mine is not None and theirs is not None and same(mine, theirs):
            return True
    return False


def conflicts_with_pod(volume: RawVolume, other: Pod) -> bool:
    return any(_same_disk(volume, existing) for existing in pod_volumes(other))


def conflicts_with_pods(volumes: Sequence[RawVolume], pods: Iterable[Pod]) -> bool:
    """True if any of `volumes` uses the same disk as a volume of one of `pods`."""
    if not volumes:
        return False
    return any(conflicts_with_pod(v, other) for other in pods for v in volumes)


def conflicts_on_node(volumes: Sequence[RawVolume], node_info: NodeInfo) -> bool:
    return conflicts_with_pods(volumes, node_info.pods.values())
