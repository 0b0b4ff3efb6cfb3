"""VolumeRestrictions: in-tree disks one node cannot share, and ReadWriteOncePod claims."""

from __future__ import annotations

import numpy as np

from plugins.helpers.plugin_bases import HandleOnlyPlugin
from plugins.helpers.pod_count_extensions import PodCountExtensions
from plugins.helpers.signatures import volumes_fragments
from plugins.helpers.volumes import PVCS
from plugins.helpers.volumes import READ_WRITE_ONCE_POD
from plugins.helpers.volumes import access_modes
from plugins.helpers.volumes import claim_not_found
from plugins.helpers.volumes import pod_claims
from plugins.helpers.volumes import pod_volumes
from plugins.volume_restrictions.conflicts import conflicts_on_node
from plugins.volume_restrictions.conflicts import restricted_volumes
from plugins.volume_restrictions.hints import after_claim_added
from plugins.volume_restrictions.hints import after_pod_deleted
from plugins.volume_restrictions.state import PRE_FILTER_STATE_KEY
from plugins.volume_restrictions.state import PreFilterState
from plugins.volume_restrictions.state import claims_in_use
from scheduler.framework import SUCCESS
from scheduler.framework import ActionType
from scheduler.framework import ClusterEvent
from scheduler.framework import ClusterEventWithHint
from scheduler.framework import Code
from scheduler.framework import CycleState
from scheduler.framework import EventResource
from scheduler.framework import FilterBatch
from scheduler.framework import NodeInfo
from scheduler.framework import NodeTable
from scheduler.framework import Pod
from scheduler.framework import PreFilterResult
from scheduler.framework import Rows
from scheduler.framework import SignFragments
from scheduler.framework import Status

REASON_DISK_CONFLICT = "node(s) had no available disk"
REASON_READ_WRITE_ONCE_POD_CONFLICT = (
    "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already "
    "in-use by another pod"
)


class VolumeRestrictions(HandleOnlyPlugin, PodCountExtensions):
    name = "VolumeRestrictions"

    # ---- PreFilter --------------------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: Pod, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status]:
        volumes = pod_volumes(pod)
        if not volumes:
            return None, Status.skip()  # the common case, kept cheap
        restricted = restricted_volumes(pod)
        if not restricted and not any("persistentVolumeClaim" in v for v in volumes):
            return None, Status.skip()
        claims = self._read_write_once_pod_claims(pod)
        if isinstance(claims, Status):
            return None, claims
        in_use = claims_in_use(table, pod.namespace, claims) if claims else 0
        if not restricted and in_use == 0:
            return None, Status.skip()
        state.write(PRE_FILTER_STATE_KEY, PreFilterState(restricted, claims, in_use))
        return None, SUCCESS

    def _read_write_once_pod_claims(self, pod: Pod) -> frozenset[str] | Status:
        lister = self._handle.lister(PVCS)
        names: set[str] = set()
        for use in pod_claims(pod):
            if use.ephemeral:
                continue
            pvc = lister.get(pod.namespace, use.claim_name)
            if pvc is None:
                return Status.unresolvable(claim_not_found(use.claim_name))
            if READ_WRITE_ONCE_POD in access_modes(pvc):
                names.add(use.claim_name)
        return frozenset(names)

    def _count_pod(self, state: CycleState, other: Pod, node_info: NodeInfo, delta: int) -> Status:
        # ReadWriteOncePod claims conflict wherever their user runs: the node does not matter.
        found = state.get(PRE_FILTER_STATE_KEY, PreFilterState)
        if found is None:
            return Status.missing_state(PRE_FILTER_STATE_KEY)
        found.update_with_pod(other, delta)
        return SUCCESS

    # ---- Filter ---------------------------------------------------------------------

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        found = state.get(PRE_FILTER_STATE_KEY, PreFilterState)
        restricted = found.restricted if found is not None else restricted_volumes(pod)
        if conflicts_on_node(restricted, node_info):
            return Status.unschedulable(REASON_DISK_CONFLICT)
        if found is None:
            return Status.missing_state(PRE_FILTER_STATE_KEY)
        if found.conflicting_claim_refs > 0:
            # Unschedulable, not unresolvable: preempting the claim's user can help.
            return Status.unschedulable(REASON_READ_WRITE_ONCE_POD_CONFLICT)
        return SUCCESS

    def filter_nodes(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows
    ) -> FilterBatch:
        found = state.get(PRE_FILTER_STATE_KEY, PreFilterState)
        if found is None:
            return FilterBatch.uniform(Status.missing_state(PRE_FILTER_STATE_KEY), len(rows))
        claim_conflict = found.conflicting_claim_refs > 0
        disk = np.zeros(len(rows), dtype=np.bool_)
        if found.restricted:
            infos = table.node_infos
            disk[:] = [conflicts_on_node(found.restricted, infos[r]) for r in rows.tolist()]
        rejected = disk | claim_conflict
        codes = np.where(rejected, np.int8(Code.UNSCHEDULABLE), np.int8(0)).astype(np.int8)
        reason_ids = np.where(disk, 0, 1).astype(np.int32)
        return FilterBatch(
            codes,
            ((REASON_DISK_CONFLICT,), (REASON_READ_WRITE_ONCE_POD_CONFLICT,)),
            reason_ids,
        )

    # ---- Signature --------------------------------------------------------------------

    def sign_pod(self, pod: Pod) -> SignFragments | None:
        # Filter compares the pod's volumes with those of the pods on the node.
        return volumes_fragments(pod)

    # ---- QueueingHints --------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            # Deleting a pod frees its disks and claims; spec.volumes never changes.
            ClusterEventWithHint(
                ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE), after_pod_deleted
            ),
            # Any new node may have the disk free.
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD)),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD),
                after_claim_added,
            ),
        ]
