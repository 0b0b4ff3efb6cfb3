"""PreFilterExtensions of a plugin whose PreFilter state counts pods.

Preemption and nominated pods ask PreFilter plugins to see a pod added to, or removed from, a
node. For a plugin that counts pods, both are the same update of its PreFilter state by one
pod more or one pod less: the plugin is its own extensions and writes only that update.
"""

from __future__ import annotations

from abc import ABC
from abc import abstractmethod
from typing import Self

from scheduler.framework import CycleState
from scheduler.framework import NodeInfo
from scheduler.framework import Pod
from scheduler.framework import Status


class PodCountExtensions(ABC):
    """AddPod and RemovePod as `_count_pod` with a delta of +1 and -1."""

    def pre_filter_extensions(self) -> Self:
        return self

    def add_pod(self, state: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo) -> Status:
        return self._count_pod(state, pod_to_add, node_info, 1)

    def remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status:
        return self._count_pod(state, pod_to_remove, node_info, -1)

    @abstractmethod
    def _count_pod(self, state: CycleState, other: Pod, node_info: NodeInfo, delta: int) -> Status:
        """Count `other`, running on `node_info`'s node, `delta` times more in the plugin's
        PreFilter state in `state`; an Error status when that state is missing."""
