"""PreFilter: run the chain, intersect node sets, and decide what Filter still has to do."""

from __future__ import annotations

import time
from dataclasses import dataclass

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.node_table import NodeTable
from scheduler.framework.plugins import PreFilterResult
from scheduler.framework.status import Code
from scheduler.framework.status import Status
from scheduler.objects.pod import Pod
from scheduler.runtime import invoke
from scheduler.runtime.profile import Profile


@dataclass(slots=True)
class PreFilterOutcome:
    status: Status
    result: PreFilterResult | None
    narrowing_plugins: list[str]

    def unsatisfied_message(self) -> str:
        """Upstream's text for nodes outside the combined PreFilter result."""
        names = sorted(self.narrowing_plugins)
        return f"node(s) didn't satisfy plugin(s) [{' '.join(names)}]"


def run_pre_filter(
    profile: Profile, state: CycleState, pod: Pod, table: NodeTable
) -> PreFilterOutcome:
    started = time.perf_counter()
    combined: PreFilterResult | None = None
    narrowing: list[str] = []
    rejection: Status | None = None
    for plugin in profile.pre_filter:
        plugin_started = time.perf_counter()
        result, status = invoke.pre_filter(plugin, state, pod, table)
        profile.observe_plugin(state, plugin.name, "PreFilter", status, plugin_started)
        if status.is_skip:
            state.skip_filter_plugins.add(plugin.name)
            continue
        if status.is_rejected:
            status = status.with_plugin(plugin.name)
            if status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
                profile.observe("PreFilter", status, started)
                return PreFilterOutcome(status, None, narrowing)
            # Keep going so that every plugin's state exists for preemption.
            rejection = rejection or status
            continue
        if not status.is_success:
            error = invoke.error_status("PreFilter", plugin.name, status)
            profile.observe("PreFilter", error, started)
            return PreFilterOutcome(error, None, narrowing)
        if result is not None and not result.all_nodes:
            narrowing.append(plugin.name)
            combined = result if combined is None else combined.merge(result)
            if combined.node_names is not None and not combined.node_names:
                if len(narrowing) == 1:
                    message = f"node(s) didn't satisfy plugin {narrowing[0]}"
                else:
                    message = (
                        f"node(s) didn't satisfy plugin(s) [{' '.join(narrowing)}] simultaneously"
                    )
                status = Status.unresolvable(message).with_plugin(plugin.name)
                profile.observe("PreFilter", status, started)
                return PreFilterOutcome(status, combined, narrowing)
    final = rejection or Status()
    profile.observe("PreFilter", final, started)
    return PreFilterOutcome(final, combined, narrowing)
