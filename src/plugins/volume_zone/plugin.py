"""VolumeZone: a pod's bound volumes keep it in their zones and regions."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from plugins.helpers import NODE_NOT_FOUND_MESSAGE
from plugins.helpers.plugin_bases import HandleOnlyPlugin
from plugins.helpers.signatures import volumes_fragments
from plugins.helpers.volumes import PVCS
from plugins.helpers.volumes import PVS
from plugins.helpers.volumes import STORAGE_CLASSES
from plugins.helpers.volumes import claim_not_found
from plugins.helpers.volumes import is_wait_for_first_consumer
from plugins.helpers.volumes import labels_of
from plugins.helpers.volumes import pod_claims
from plugins.volume_zone.hints import after_claim_change
from plugins.volume_zone.hints import after_storage_class_added
from plugins.volume_zone.hints import after_volume_change
from plugins.volume_zone.topology import TOPOLOGY_LABELS
from plugins.volume_zone.topology import PVTopology
from plugins.volume_zone.topology import node_satisfies
from plugins.volume_zone.topology import pv_topologies
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
from scheduler.objects.raw import spec_of
from scheduler.objects.raw import storage_class_of

REASON_CONFLICT = "node(s) had no available volume zone"
PRE_FILTER_STATE_KEY = "PreFilterVolumeZone"

BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True, slots=True)
class PreFilterState:
    topologies: tuple[PVTopology, ...]


class VolumeZone(HandleOnlyPlugin):
    name = "VolumeZone"

    # ---- PreFilter --------------------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: Pod, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status]:
        found = self._topologies(pod)
        if isinstance(found, Status):
            return None, found
        if not found:
            return None, Status.skip()
        state.write(PRE_FILTER_STATE_KEY, PreFilterState(found))
        return None, SUCCESS

    def _topologies(self, pod: Pod) -> tuple[PVTopology, ...] | Status:
        """Topology constraints of the PVs bound to the pod's claims; claims that wait for
        their first consumer are left to VolumeBinding."""
        topologies: list[PVTopology] = []
        for use in pod_claims(pod):
            if use.ephemeral:
                continue
            if not use.claim_name:
                return Status.unresolvable("PersistentVolumeClaim had no name")
            pvc = self._handle.lister(PVCS).get(pod.namespace, use.claim_name)
            if pvc is None:
                return Status.unresolvable(claim_not_found(use.claim_name))
            pv_name = str(spec_of(pvc).get("volumeName") or "")
            if not pv_name:
                class_name = storage_class_of(pvc)
                if not class_name:
                    return Status.unresolvable(
                        "PersistentVolumeClaim had no pv name and storageClass name"
                    )
                storage_class = self._handle.lister(STORAGE_CLASSES).get("", class_name)
                if storage_class is None:
                    return Status.unresolvable(
                        f'storageclass.storage.k8s.io "{class_name}" not found'
                    )
                if is_wait_for_first_consumer(storage_class):
                    continue
                return Status.unresolvable("PersistentVolume had no name")
            pv = self._handle.lister(PVS).get("", pv_name)
            if pv is None:
                return Status.unresolvable(f'persistentvolume "{pv_name}" not found')
            topologies.extend(pv_topologies(pv_name, labels_of(pv)))
        return tuple(topologies)

    def pre_filter_extensions(self) -> None:
        return None

    def _state(self, state: CycleState, pod: Pod) -> tuple[PVTopology, ...] | Status:
        found = state.get(PRE_FILTER_STATE_KEY, PreFilterState)
        if found is not None:
            return found.topologies
        # PreFilter did not run: work the constraints out here.
        return self._topologies(pod) if pod_claims(pod) else ()

    # ---- Filter ---------------------------------------------------------------------

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        topologies = self._state(state, pod)
        if isinstance(topologies, Status):
            return topologies
        if not topologies:
            return SUCCESS
        node = node_info.node
        if node is None:
            return Status.from_error(NODE_NOT_FOUND_MESSAGE)
        if node_satisfies(topologies, node.labels):
            return SUCCESS
        return Status.unresolvable(REASON_CONFLICT)

    def filter_nodes(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows
    ) -> FilterBatch:
        topologies = self._state(state, pod)
        if isinstance(topologies, Status):
            return FilterBatch.uniform(topologies, len(rows))
        if not topologies:
            return FilterBatch.all_pass(len(rows))
        rejected = _zoned_rows(table, rows) & ~_satisfying_rows(table, rows, topologies)
        return FilterBatch.reject_where(
            rejected, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, REASON_CONFLICT
        )

    # ---- Signature --------------------------------------------------------------------

    def sign_pod(self, pod: Pod) -> SignFragments | None:
        # Filter reads the zones of the volumes behind the pod's PVCs.
        return volumes_fragments(pod)

    # ---- QueueingHints --------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            # The binding mode of a class never changes, so only new classes matter.
            ClusterEventWithHint(
                ClusterEvent(EventResource.STORAGE_CLASS, ActionType.ADD),
                after_storage_class_added,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)
            ),
            ClusterEventWithHint(
                ClusterEvent(
                    EventResource.PERSISTENT_VOLUME_CLAIM, ActionType.ADD | ActionType.UPDATE
                ),
                after_claim_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME, ActionType.ADD | ActionType.UPDATE),
                after_volume_change,
            ),
        ]


def _values_in(table: NodeTable, key: str, rows: Rows, allowed: frozenset[str]) -> BoolArray:
    """Per row: the node has label `key` with a value in `allowed` (checked once per value)."""
    ids, values = table.label_ids(key)
    # The extra last slot stands for "label absent", which id -1 indexes.
    per_value = np.array([v in allowed for v in values] + [False], dtype=np.bool_)
    result: BoolArray = per_value[ids[rows]]
    return result


def _has_label(table: NodeTable, key: str, rows: Rows) -> BoolArray:
    ids, _ = table.label_ids(key)
    present: BoolArray = ids[rows] >= 0
    return present


def _zoned_rows(table: NodeTable, rows: Rows) -> BoolArray:
    zoned = np.zeros(len(rows), dtype=np.bool_)
    for key in TOPOLOGY_LABELS:
        zoned |= _has_label(table, key, rows)
    return zoned


def _satisfying_rows(table: NodeTable, rows: Rows, topologies: tuple[PVTopology, ...]) -> BoolArray:
    ok = np.ones(len(rows), dtype=np.bool_)
    for topology in topologies:
        matches = _values_in(table, topology.key, rows, topology.values)
        if topology.ga_key != topology.key:
            via_ga = _values_in(table, topology.ga_key, rows, topology.values)
            matches = np.where(_has_label(table, topology.key, rows), matches, via_ga)
        ok &= matches
    return ok
