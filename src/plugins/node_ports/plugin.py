"""NodePorts: a node fits only if none of the pod's host ports is already taken there."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from plugins.helpers import NODE_NOT_FOUND_MESSAGE
from plugins.helpers.plugin_bases import NoArgsPlugin
from plugins.helpers.signatures import HOST_PORTS
from plugins.node_ports.hints import is_schedulable_after_pod_deleted
from plugins.node_ports.ports import ports_conflict
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
from scheduler.framework import PreFilterExtensions
from scheduler.framework import PreFilterResult
from scheduler.framework import Rows
from scheduler.framework import SignFragments
from scheduler.framework import Status
from scheduler.objects.pod_ports import HostPort

REASON = "node(s) didn't have free ports for the requested pod ports"

PRE_FILTER_STATE_KEY = "PreFilterNodePorts"


@dataclass(frozen=True, slots=True)
class PreFilterState:
    """The host ports the pod asks for."""

    wanted: tuple[HostPort, ...]


def _port_order(port: HostPort) -> tuple[int, str, str]:
    return port.port, port.protocol, port.host_ip


class NodePorts(NoArgsPlugin):
    name = "NodePorts"

    def pre_filter(
        self, state: CycleState, pod: Pod, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status]:
        if not pod.host_ports:
            return None, Status.skip()
        state.write(PRE_FILTER_STATE_KEY, PreFilterState(pod.host_ports))
        return None, SUCCESS

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        # Preemption sees freed ports through NodeInfo itself; no state to adjust.
        return None

    def _wanted(self, state: CycleState, pod: Pod) -> tuple[HostPort, ...]:
        found = state.get(PRE_FILTER_STATE_KEY, PreFilterState)
        return found.wanted if found is not None else pod.host_ports

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if node_info.node is None:
            return Status.from_error(NODE_NOT_FOUND_MESSAGE)
        if ports_conflict(self._wanted(state, pod), node_info.used_ports):
            return Status.unschedulable(REASON)
        return SUCCESS

    def filter_nodes(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows
    ) -> FilterBatch:
        wanted = self._wanted(state, pod)
        rejected = np.zeros(len(rows), dtype=np.bool_)
        if wanted:
            # Only nodes that use some host port can conflict; the rest pass untouched.
            busy = np.flatnonzero(table.port_count[rows] > 0)
            for index in busy:
                info = table.node_infos[int(rows[index])]
                rejected[index] = ports_conflict(wanted, info.used_ports)
        return FilterBatch.reject_where(rejected, Code.UNSCHEDULABLE, REASON)

    def sign_pod(self, pod: Pod) -> SignFragments | None:
        # Each port with the protocol and host IP that decide conflicts (upstream signs the
        # port numbers only); their order and repeats change nothing.
        return {HOST_PORTS: tuple(sorted(set(pod.host_ports), key=_port_order))}

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            ClusterEventWithHint(
                ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE),
                is_schedulable_after_pod_deleted,
            ),
            # A new node has no ports in use yet; every Add may help (no hint).
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD)),
        ]
