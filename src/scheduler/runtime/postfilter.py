"""PostFilter: give plugins (preemption) a chance after no node fits."""

from __future__ import annotations

import time

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.plugins import NodeStatusReader
from scheduler.framework.plugins import PostFilterResult
from scheduler.framework.status import Status
from scheduler.objects.pod import Pod
from scheduler.runtime import invoke
from scheduler.runtime.profile import Profile


def run_post_filter(
    profile: Profile, state: CycleState, pod: Pod, statuses: NodeStatusReader
) -> tuple[PostFilterResult | None, Status]:
    """Plugins in order; the first Success stops the chain. Messages of failures are joined."""
    started = time.perf_counter()
    result: PostFilterResult | None = None
    messages: list[str] = []
    final = Status.unschedulable()
    for plugin in profile.post_filter:
        plugin_result, status = invoke.post_filter(plugin, state, pod, statuses)
        if status.is_success:
            profile.observe("PostFilter", status, started)
            return plugin_result, status.with_plugin(plugin.name)
        if not status.is_rejected:
            error = (
                status
                if isinstance(status, invoke.PluginFault)
                else Status.from_error(status.message()).with_plugin(plugin.name)
            )
            profile.observe("PostFilter", error, started)
            return None, error
        if plugin_result is not None and result is None:
            result = plugin_result
        if status.message():
            messages.append(status.message())
        final = Status(status.code, *messages, plugin=plugin.name)
    profile.observe("PostFilter", final, started)
    return result, final
