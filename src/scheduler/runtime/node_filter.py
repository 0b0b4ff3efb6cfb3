"""Filtering one node with a profile's plugins: the per-node path shared by the executor,
nominated pods, and plugins (preemption) through the Handle."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Protocol

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.node_info import NodeInfo
from scheduler.framework.node_info import counted_nominations
from scheduler.framework.plugins import FilterPlugin
from scheduler.framework.plugins import PreFilterPlugin
from scheduler.framework.status import Status
from scheduler.objects.pod import Pod
from scheduler.runtime import invoke


class ObservesPlugins(Protocol):
    def count_evaluation(self, plugin: str, point: str) -> None: ...

    def observe_duration(
        self, state: CycleState, plugin: str, point: str, status: Status, started: float
    ) -> None: ...


class _Unobserved:
    def count_evaluation(self, plugin: str, point: str) -> None:
        return None

    def observe_duration(
        self, state: CycleState, plugin: str, point: str, status: Status, started: float
    ) -> None:
        return None


@dataclass(frozen=True, slots=True)
class FilterChain:
    """The PreFilter plugins (for their extensions) and Filter plugins of one profile.

    Every Filter call is counted through `observer`, and in the cycles the sampler picked each
    call is timed, as upstream counts and times the Filter calls (and times the PreFilter
    extensions) of preemption's dry runs, of nodes with nominated pods and of batching's check
    of the last chosen node."""

    pre_filter: Sequence[PreFilterPlugin]
    filter: Sequence[FilterPlugin]
    observer: ObservesPlugins = field(default_factory=_Unobserved)

    def run_on_node(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        """All Filter plugins on one node; the first rejection wins (RunFilterPlugins)."""
        timed = state.record_plugin_metrics
        for plugin in self.filter:
            if plugin.name in state.skip_filter_plugins:
                continue
            self.observer.count_evaluation(plugin.name, "Filter")
            started = time.perf_counter() if timed else 0.0
            status = invoke.call_status("Filter", plugin.name, plugin.filter, state, pod, node_info)
            if timed:
                self.observer.observe_duration(state, plugin.name, "Filter", status, started)
            if not status.is_success:
                return invoke.plugin_failure("Filter", plugin.name, status)
        return Status()

    def add_pod(self, state: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo) -> Status:
        """Tell every PreFilter extension that `pod_to_add` now runs on `node_info`'s node."""
        return self._extensions(state, pod, pod_to_add, node_info, adding=True)

    def remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status:
        """Tell every PreFilter extension that `pod_to_remove` no longer runs there."""
        return self._extensions(state, pod, pod_to_remove, node_info, adding=False)

    def _extensions(
        self, state: CycleState, pod: Pod, other: Pod, node_info: NodeInfo, *, adding: bool
    ) -> Status:
        verb = "AddPod" if adding else "RemovePod"
        for plugin in self.pre_filter:
            if plugin.name in state.skip_filter_plugins:
                continue
            extensions = invoke.extensions(verb, plugin.name, plugin.pre_filter_extensions)
            if isinstance(extensions, Status):
                return extensions
            if extensions is None:
                continue
            method = extensions.add_pod if adding else extensions.remove_pod
            started = time.perf_counter()
            status = invoke.call_status(verb, plugin.name, method, state, pod, other, node_info)
            self.observer.observe_duration(
                state, plugin.name, f"PreFilterExtension{verb}", status, started
            )
            if not status.is_success:
                return invoke.error_status(verb, plugin.name, status)
        return Status()

    def run_with_nominated(
        self, state: CycleState, pod: Pod, node_info: NodeInfo, nominated: Sequence[Pod]
    ) -> Status:
        """Filter a node as if pods nominated to it (equal or higher priority) were running.

        If any were added and the pod fits with them, it must also fit without them, since
        inter-pod affinity may depend on their presence (upstream runs Filter twice).
        """
        relevant = counted_nominations(pod, nominated)
        if relevant:
            state_with = state.clone()
            info_with = node_info.clone()
            for other in relevant:
                info_with.add_pod(other)
                status = self.add_pod(state_with, pod, other, info_with)
                if not status.is_success:
                    return status
            status = self.run_on_node(state_with, pod, info_with)
            if not status.is_success:
                return status
        return self.run_on_node(state, pod, node_info)
