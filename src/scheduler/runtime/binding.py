"""PreBind, Bind and PostBind: the awaitable extension points of the binding cycle."""

from __future__ import annotations

import time

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.status import Status
from scheduler.objects.pod import Pod
from scheduler.runtime import invoke
from scheduler.runtime.chain_end import ended
from scheduler.runtime.chain_end import stopped_at
from scheduler.runtime.profile import Profile


async def run_pre_bind(profile: Profile, state: CycleState, pod: Pod, node_name: str) -> Status:
    started = time.perf_counter()
    for plugin in profile.pre_bind:
        status = await invoke.await_status(
            "PreBind", plugin.name, plugin.pre_bind, state, pod, node_name
        )
        if not (status.is_success or status.is_skip):
            return stopped_at(profile, "PreBind", plugin.name, status, started)
    return ended(profile, "PreBind", started)


async def run_bind(profile: Profile, state: CycleState, pod: Pod, node_name: str) -> Status:
    """The first Bind plugin that does not Skip decides."""
    started = time.perf_counter()
    for plugin in profile.bind:
        status = await invoke.await_status("Bind", plugin.name, plugin.bind, state, pod, node_name)
        if status.is_skip:
            continue
        if not status.is_success:
            return stopped_at(profile, "Bind", plugin.name, status, started)
        return ended(profile, "Bind", started, status)
    return ended(profile, "Bind", started, Status.skip())


async def run_post_bind(profile: Profile, state: CycleState, pod: Pod, node_name: str) -> None:
    started = time.perf_counter()
    for plugin in profile.post_bind:
        # PostBind is informational: a failure is logged and the pod stays bound.
        await invoke.await_for_effect(
            "PostBind", plugin.name, plugin.post_bind, state, pod, node_name
        )
    ended(profile, "PostBind", started)
