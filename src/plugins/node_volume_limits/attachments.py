"""Volumes a node has attached by VolumeAttachment, pod or no pod.

A volume stays attached after its pod is gone until the attacher detaches it, and it still
takes one of the node's slots meanwhile; upstream counts it, found by the VolumeAttachment's
attacher and its PersistentVolume's volume handle, so that a new pod is not sent to a node
whose slots are still held.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from plugins.helpers.volumes import PVS
from plugins.helpers.volumes import VOLUME_ATTACHMENTS
from scheduler.framework import Handle
from scheduler.framework import Lister
from scheduler.objects.raw import spec_of

# Volume unique name ("<driver>/<handle>") -> driver name.
AttachedVolumes = dict[str, str]

_BY_NODE = "spec.nodeName"


def _node_name(attachment: Mapping[str, Any]) -> str | None:
    return str(spec_of(attachment).get("nodeName") or "") or None


class NodeAttachments:
    """The CSI volumes VolumeAttachments hold on each node."""

    def __init__(self, handle: Handle) -> None:
        self._handle = handle
        # Indexed on first use: informers start after plugins are built.
        self._indexed: Lister | None = None

    def on_node(self, node_name: str) -> AttachedVolumes:
        lister = self._handle.lister(VOLUME_ATTACHMENTS)
        if lister is not self._indexed:
            lister.add_index(_BY_NODE, _node_name)
            self._indexed = lister
        volumes = self._handle.lister(PVS)
        found: AttachedVolumes = {}
        for attachment in lister.by_index(_BY_NODE, node_name):
            spec = spec_of(attachment)
            attacher = str(spec.get("attacher") or "")
            pv_name = str((spec.get("source") or {}).get("persistentVolumeName") or "")
            if not attacher or not pv_name:
                continue  # an inline volume's attachment: no PV to name the volume by
            pv = volumes.get("", pv_name)
            csi = spec_of(pv).get("csi") if pv is not None else None
            if not isinstance(csi, Mapping):
                continue
            found[f"{attacher}/{csi.get('volumeHandle') or ''}"] = attacher
        return found
