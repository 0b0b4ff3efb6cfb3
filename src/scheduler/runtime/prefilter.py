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
    """The chain's status, the intersected node set (None: every node), and the plugins that
    narrowed it: upstream counts those among the pod's rejectors whatever the outcome."""

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
    """Every PreFilter plugin, as upstream's RunPreFilterPlugins: UnschedulableAndUnresolvable
    or an Error stops the chain; Unschedulable is kept (the last one wins) while the rest run,
    so that preemption finds every plugin's state; node sets are intersected as they come."""
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
        if status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
            return _ended(profile, started, status.with_plugin(plugin.name))
        if status.code is Code.UNSCHEDULABLE:
            rejection = status.with_plugin(plugin.name)
            continue
        if not status.is_success:
            # Pending included: PreFilter may only succeed, skip or reject as Unschedulable.
            return _ended(profile, started, invoke.error_status("PreFilter", plugin.name, status))
        if result is not None and not result.all_nodes:
            narrowing.append(plugin.name)
            combined = result if combined is None else combined.merge(result)
            if combined.node_names is not None and not combined.node_names:
                # Every plugin that narrowed counts as a rejector; the status names none.
                status = Status.unresolvable(_disjoint_message(narrowing))
                profile.observe("PreFilter", status, started)
                return PreFilterOutcome(status, combined, narrowing)
    final = rejection or Status()
    profile.observe("PreFilter", final, started)
    return PreFilterOutcome(final, combined, narrowing)


def _ended(profile: Profile, started: float, status: Status) -> PreFilterOutcome:
    profile.observe("PreFilter", status, started)
    return PreFilterOutcome(status, None, [])


def _disjoint_message(narrowing: list[str]) -> str:
    names = sorted(narrowing)
    if len(names) == 1:
        return f"node(s) didn't satisfy plugin {names[0]}"
    return f"node(s) didn't satisfy plugin(s) [{' '.join(names)}] simultaneously"
