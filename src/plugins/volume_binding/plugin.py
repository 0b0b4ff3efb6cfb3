"""VolumeBinding: bound claims' PVs must suit the node; claims waiting for their first consumer
get a matching PV or dynamic provisioning, chosen per node, assumed at Reserve and written and
waited for at PreBind. Under the StorageCapacityScoring gate, Score ranks nodes by how full
their storage would be (`scoring.py`)."""

from __future__ import annotations

from plugins.helpers import NODE_NOT_FOUND_MESSAGE
from plugins.helpers.signatures import volumes_fragments
from plugins.helpers.volumes import PVCS
from plugins.helpers.volumes import pod_claims
from plugins.volume_binding.args import DEFAULT_SHAPE
from plugins.volume_binding.args import STORAGE_CAPACITY_SCORING
from plugins.volume_binding.args import VolumeBindingArgs
from plugins.volume_binding.assume_cache import AssumeError
from plugins.volume_binding.binder import VolumeBinder
from plugins.volume_binding.claims import PodVolumeClaims
from plugins.volume_binding.claims import claims_problem
from plugins.volume_binding.hints import after_claim_change
from plugins.volume_binding.hints import after_csi_driver_change
from plugins.volume_binding.hints import after_csi_node_change
from plugins.volume_binding.hints import after_storage_capacity_change
from plugins.volume_binding.hints import after_storage_class_change
from plugins.volume_binding.migration import MigrationError
from plugins.volume_binding.prebind import BindingError
from plugins.volume_binding.prebind import wait_for_bindings
from plugins.volume_binding.prebind import write_bindings
from plugins.volume_binding.provisioning import ProvisioningError
from plugins.volume_binding.scoring import StorageScorer
from plugins.volume_binding.state import STATE_KEY
from plugins.volume_binding.state import StateData
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
from scheduler.framework.errors import APIError
from scheduler.framework.errors import error_text

REASON_UNBOUND_IMMEDIATE = "pod has unbound immediate PersistentVolumeClaims"


# Stages of `scheduler_volume_scheduling_stage_error_total`, as upstream's binder names them:
# finding volumes for a node (Filter), assuming them (Reserve), writing the bindings (PreBind).
PREDICATE = "predicate"
ASSUME = "assume"
BIND = "bind"


class VolumeBinding:
    name = "VolumeBinding"

    def __init__(self, args: VolumeBindingArgs | None, handle: Handle) -> None:
        self._handle = handle
        args = args or VolumeBindingArgs()
        self._timeout = float(args.bind_timeout_seconds)
        self.binder = VolumeBinder(handle)
        # As upstream, Score works only under the gate; without it PreScore skips it.
        self._scorer: StorageScorer | None = None
        if handle.feature_enabled(STORAGE_CAPACITY_SCORING):
            self._scorer = StorageScorer(args.shape or DEFAULT_SHAPE)

    # ---- PreFilter --------------------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: Pod, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status]:
        if not pod_claims(pod):
            return None, Status.skip()
        problem = claims_problem(pod, self._handle.lister(PVCS))
        if problem is not None:
            return None, Status.unresolvable(problem)
        claims = self.binder.pod_volume_claims(pod)
        if isinstance(claims, str):
            return None, Status.from_error(claims)
        if claims.immediate:
            # The PV controller binds these; the claim update requeues the pod.
            return None, Status.unresolvable(REASON_UNBOUND_IMMEDIATE)
        state.write(STATE_KEY, StateData(claims))
        # v1.36 no longer narrows the nodes to those of bound local volumes: Filter checks
        # each node against the volumes' node affinity and names the reason.
        return None, SUCCESS

    def pre_filter_extensions(self) -> None:
        return None

    # ---- Filter ---------------------------------------------------------------------

    def _state(self, state: CycleState, pod: Pod) -> StateData | Status:
        found = state.get(STATE_KEY, StateData)
        if found is not None:
            return found
        if not pod_claims(pod):
            return StateData(PodVolumeClaims())
        return Status.missing_state(STATE_KEY)

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        data = self._state(state, pod)
        if isinstance(data, Status):
            return data
        return self._filter_node(data, node_info)

    def _filter_node(self, data: StateData, node_info: NodeInfo) -> Status:
        node = node_info.node
        if node is None:
            return Status.from_error(NODE_NOT_FOUND_MESSAGE)
        try:
            volumes, reasons = self.binder.find_pod_volumes(data.claims, node)
        except (ProvisioningError, MigrationError) as exc:
            self._handle.plugin_metrics.volume_scheduling_stage_error(PREDICATE)
            return Status.from_error(str(exc))
        if reasons:
            return Status.unresolvable(*reasons)
        data.volumes_by_node[node.name] = volumes
        return SUCCESS

    def filter_nodes(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows
    ) -> FilterBatch:
        data = self._state(state, pod)
        if isinstance(data, Status):
            return FilterBatch.uniform(data, len(rows))
        infos = table.node_infos
        return FilterBatch.from_statuses([self._filter_node(data, infos[r]) for r in rows.tolist()])

    # ---- PreScore / Score --------------------------------------------------------------

    def pre_score(self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows) -> Status:
        if self._scorer is None or state.get(STATE_KEY, StateData) is None:
            return Status.skip()  # off, or a pod without claims: every node would score 0
        return SUCCESS

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        data = state.get(STATE_KEY, StateData)
        if data is None:
            return 0, Status.missing_state(STATE_KEY)
        volumes = data.volumes_by_node.get(node_info.name)
        if self._scorer is None or volumes is None:
            return 0, SUCCESS
        return self._scorer.score(volumes), SUCCESS

    def score_extensions(self) -> None:
        return None

    # ---- Reserve / Unreserve ----------------------------------------------------------

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        data = state.get(STATE_KEY, StateData)
        if data is None:
            return SUCCESS  # the pod has no claims
        volumes = data.volumes_by_node.get(node_name)
        if volumes is None:
            data.all_bound = True
            return SUCCESS
        try:
            data.all_bound = self.binder.assume(pod, node_name, volumes)
        except AssumeError as exc:
            self._handle.plugin_metrics.volume_scheduling_stage_error(ASSUME)
            return Status.from_error(str(exc))
        return SUCCESS

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        data = state.get(STATE_KEY, StateData)
        if data is None:
            return
        volumes = data.volumes_by_node.get(node_name)
        if volumes is not None:
            self.binder.revert(volumes)

    # ---- PreBind ----------------------------------------------------------------------

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        """Work only when Reserve left volumes to bind on the node."""
        data = state.get(STATE_KEY, StateData)
        if data is None or data.all_bound:
            return Status.skip()
        if node_name not in data.volumes_by_node:
            return Status.from_error(f'no pod volume found for node "{node_name}"')
        return SUCCESS

    async def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        data = state.get(STATE_KEY, StateData)
        if data is None or data.all_bound:
            return SUCCESS
        volumes = data.volumes_by_node.get(node_name)
        if volumes is None:
            return Status.from_error(f'no pod volume found for node "{node_name}"')
        try:
            written = await write_bindings(self._handle, self.binder, volumes, node_name)
            await wait_for_bindings(self._handle, pod, volumes, written, node_name, self._timeout)
        except (APIError, BindingError) as exc:
            self._handle.plugin_metrics.volume_scheduling_stage_error(BIND)
            return Status.from_error(error_text(exc))
        except BaseException:
            # Cancelled (a preemption, or shutdown), or failed otherwise: upstream counts any
            # error of BindPodVolumes, its context's included.
            self._handle.plugin_metrics.volume_scheduling_stage_error(BIND)
            raise
        return SUCCESS

    # ---- Signature --------------------------------------------------------------------

    def sign_pod(self, pod: Pod) -> SignFragments | None:
        # Filter reads the pod's PVCs (bound or to bind) and nothing else of the pod.
        return volumes_fragments(pod)

    # ---- QueueingHints --------------------------------------------------------------

    def events_to_register(self) -> list[ClusterEventWithHint]:
        add_or_update = ActionType.ADD | ActionType.UPDATE
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.STORAGE_CLASS, add_or_update),
                after_storage_class_change,
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.PERSISTENT_VOLUME_CLAIM, add_or_update),
                after_claim_change,
            ),
            ClusterEventWithHint(ClusterEvent(EventResource.PERSISTENT_VOLUME, add_or_update)),
            # Node labels decide PV node affinity and a class's allowed topologies.
            ClusterEventWithHint(
                ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL)
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.CSI_NODE, add_or_update), after_csi_node_change
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.CSI_DRIVER, ActionType.UPDATE), after_csi_driver_change
            ),
            ClusterEventWithHint(
                ClusterEvent(EventResource.CSI_STORAGE_CAPACITY, add_or_update),
                after_storage_capacity_change,
            ),
        ]
