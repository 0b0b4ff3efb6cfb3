"""PreBind, Bind and PostBind: the awaitable extension points of the binding cycle."""

from __future__ import annotations

import time

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.status import Status
from scheduler.objects.pod import Pod
from scheduler.runtime import invoke
from scheduler.runtime.profile import Profile


async def run_pre_bind(profile: Profile, state: CycleState, pod: Pod, node_name: str) -> Status:
    started = time.perf_counter()
    for plugin in profile.pre_bind:
        status = await invoke.await_status(
            "PreBind", plugin.name, plugin.pre_bind, state, pod, node_name
        )
        if status.is_success or status.is_skip:
            continue
        status = invoke.plugin_failure("PreBind", plugin.name, status)
        profile.observe("PreBind", status, started)
        return status
    profile.observe("PreBind", Status(), started)
    return Status()


async def run_bind(profile: Profile, state: CycleState, pod: Pod, node_name: str) -> Status:
    """The first Bind plugin that does not Skip decides."""
    started = time.perf_counter()
    for plugin in profile.bind:
        status = await invoke.await_status("Bind", plugin.name, plugin.bind, state, pod, node_name)
        if status.is_skip:
            continue
        if not status.is_success:
            status = invoke.plugin_failure("Bind", plugin.name, status)
        profile.observe("Bind", status, started)
        return status
    skipped = Status.skip()
    profile.observe("Bind", skipped, started)
    return skipped


async def run_post_bind(profile: Profile, state: CycleState, pod: Pod, node_name: str) -> None:
    started = time.perf_counter()
    for plugin in profile.post_bind:
        # PostBind is informational: a failure is logged and the pod stays bound.
        await invoke.await_for_effect(
            "PostBind", plugin.name, plugin.post_bind, state, pod, node_name
        )
    profile.observe("PostBind", Status(), started)
