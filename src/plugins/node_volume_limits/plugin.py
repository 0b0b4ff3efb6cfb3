"""NodeVolumeLimits: a node may not get more CSI volumes of a driver than it can attach."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from plugins.helpers import NODE_NOT_FOUND_MESSAGE
from plugins.helpers.signatures import volumes_fragments
from plugins.helpers.volumes import CSI_DRIVERS
from plugins.helpers.volumes import CSI_NODES
from plugins.node_volume_limits.attachable import VolumeResolver
from plugins.node_volume_limits.attachable import counts_volumes
from plugins.node_volume_limits.attachments import AttachedVolumes
from plugins.node_volume_limits.attachments import NodeAttachments
from plugins.node_volume_limits.hints import after_assigned_pod_deleted
from plugins.node_volume_limits.hints import after_attachment_deleted
from plugins.node_volume_limits.hints import after_claim_added
from plugins.node_volume_limits.hints import after_csi_node_updated
from plugins.node_volume_limits.limits import csi_node_counts
from plugins.node_volume_limits.limits import installed_drivers
from scheduler.framework import SUCCESS
from scheduler.framework import ActionType
from scheduler.framework import ClusterEvent
from scheduler.framework import ClusterEventWithHint
from scheduler.framework import CycleState
from scheduler.framework import EventResource
from scheduler.framework import FilterBatch
from scheduler.framework import Handle
from scheduler.framework import NodeInfo
from scheduler.framework import NodeTable
from scheduler.framework import Pod
from scheduler.framework import PreFilterResult
from scheduler.framework import Rows
from scheduler.framework import SignFragments
from scheduler.framework import Status
from scheduler.objects.raw import spec_of

REASON_MAX_VOLUME_COUNT = "node(s) exceed max volume count"
PRE_FILTER_STATE_KEY = "PreFilterNodeVolumeLimits"


@dataclass(frozen=True, slots=True)
class PreFilterState:
    """The pod's own CSI volumes as a node with a CSINode sees them and as one without does,
    each or why it is unknown."""

    with_csi_node: AttachedVolumes | Status
    without_csi_node: AttachedVolumes | Status

    def on(self, csi_node: Mapping[str, Any] | None) -> AttachedVolumes | Status:
        return self.with_csi_node if csi_node is not None else self.without_csi_node


class NodeVolumeLimits:
    name = "NodeVolumeLimits"

    def __init__(self, args: None, handle: Handle) -> None:
        del args
        self._handle = handle
        self._resolver = VolumeResolver(handle)
        self._attachments = NodeAttachments(handle)
        # VolumeLimitScaling: a driver may ask that no pod go to a node it is not installed on.
        self._scaling = handle.feature_enabled("VolumeLimitScaling")

    def pre_filter(
        self, state: CycleState, pod: Pod, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status]:
        if not counts_volumes(pod):
            return None, Status.skip()
        state.write(PRE_FILTER_STATE_KEY, self._pod_volumes(pod))
        return None, SUCCESS

    def pre_filter_extensions(self) -> None:
        return None

    def _pod_volumes(self, pod: Pod) -> PreFilterState:
        return PreFilterState(*self._resolver.new_pod_volumes(pod))

    def _new_volumes(self, state: CycleState, pod: Pod) -> PreFilterState:
        found = state.get(PRE_FILTER_STATE_KEY, PreFilterState)
        if found is not None:
            return found
        return self._pod_volumes(pod) if counts_volumes(pod) else PreFilterState({}, {})

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return self._check(self._new_volumes(state, pod), node_info)

    def filter_nodes(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows
    ) -> FilterBatch:
        volumes = self._new_volumes(state, pod)
        if volumes.with_csi_node == volumes.without_csi_node:
            if isinstance(volumes.with_csi_node, Status):
                return FilterBatch.uniform(volumes.with_csi_node, len(rows))
            if not volumes.with_csi_node:
                return FilterBatch.all_pass(len(rows))
        infos = table.node_infos
        return FilterBatch.from_statuses([self._check(volumes, infos[r]) for r in rows.tolist()])

    def _check(self, volumes: PreFilterState, node_info: NodeInfo) -> Status:
        node = node_info.node
        if node is None:
            return Status.from_error(NODE_NOT_FOUND_MESSAGE)
        csi_node = self._handle.lister(CSI_NODES).get("", node.name)
        new_volumes = volumes.on(csi_node)
        if isinstance(new_volumes, Status):
            return new_volumes
        if not new_volumes:
            return SUCCESS
        if self._scaling:
            missing = self._missing_driver(new_volumes, csi_node)
            if missing:
                return Status.unschedulable(f"{missing} CSI driver is not installed on the node")
        limits = csi_node_counts(csi_node)
        if not limits:
            return SUCCESS
        attached: AttachedVolumes = {}
        for existing in node_info.pods.values():
            failed = self._resolver.existing_pod_volumes(existing, csi_node, attached)
            if failed is not None:
                return failed
        attached_count: dict[str, int] = {}
        for driver in attached.values():
            attached_count[driver] = attached_count.get(driver, 0) + 1
        # Volumes still attached without a pod of the node using them take slots too.
        for unique_name, driver in self._attachments.on_node(node.name).items():
            if unique_name not in attached:
                attached_count[driver] = attached_count.get(driver, 0) + 1
        new_count: dict[str, int] = {}
        for unique_name, driver in new_volumes.items():
            # A volume another pod of the node already uses takes no further slot.
            if unique_name not in attached:
                new_count[driver] = new_count.get(driver, 0) + 1
        for driver, count in new_count.items():
            limit = limits.get(driver)
            if limit is not None and attached_count.get(driver, 0) + count > limit:
                return Status.unschedulable(REASON_MAX_VOLUME_COUNT)
        return SUCCESS

    def _missing_driver(
        self, new_volumes: AttachedVolumes, csi_node: Mapping[str, Any] | None
    ) -> str:
        """The first driver of the pod's volumes that asks not to be scheduled to without it
        (its CSIDriver's `preventPodSchedulingIfMissing`) and that the node lacks, or ""."""
        installed = installed_drivers(csi_node)
        drivers = self._handle.lister(CSI_DRIVERS)
        for driver in sorted(set(new_volumes.values())):
            found = drivers.get("", driver)
            spec = spec_of(found) if found is not None else {}
            if spec.get("preventPodSchedulingIfMissing") is True and driver not in installed:
                return driver
        return ""

    def sign_pod(self, pod: Pod) -> SignFragments | None:
        # Filter counts the volumes the pod would attach, found through its PVCs.
        return volumes_fragments(pod)

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            # Any new CSINode may carry room for the pod's volumes.
            ClusterEventWithHint(ClusterEvent(EventResource.CSI_NODE, ActionType.ADD)),
            ClusterEventWithHint(
                ClusterEvent(EventResource.CSI_NODE, ActionType.UPDATE), after_csi_node_updated
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE),
                after_assigned_pod_deleted,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD),
                after_claim_added,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.VOLUME_ATTACHMENT, ActionType.DELETE),
                after_attachment_deleted,
            ),
        ]
