"""PreBindPreFlight, PreBind, Bind and PostBind: the extension points of the binding cycle."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.status import SUCCESS
from scheduler.framework.status import Code
from scheduler.framework.status import Status
from scheduler.objects.pod import Pod
from scheduler.runtime import invoke
from scheduler.runtime.chain_end import ended
from scheduler.runtime.chain_end import stopped_at
from scheduler.runtime.profile import Profile

PRE_BIND_PRE_FLIGHT = "PreBindPreFlight"


def run_pre_bind_pre_flights(
    profile: Profile, state: CycleState, pod: Pod, node_name: str
) -> Status:
    """Success when some PreBind plugin will work for the pod (or has no PreBindPreFlight to
    say it will not), Skip when none will (or there are none); an Error, or a code the point
    does not allow, fails the attempt. Plugins that answer Skip are left out of PreBind."""
    started = time.perf_counter()
    result = Status.skip()
    skipped: set[str] = set()
    for plugin, pre_flight in profile.pre_bind_pre_flights:
        if pre_flight is None:
            result = SUCCESS
            continue
        plugin_started = time.perf_counter()
        status = invoke.call_status(
            PRE_BIND_PRE_FLIGHT, plugin.name, pre_flight, state, pod, node_name
        )
        profile.observe_duration(state, plugin.name, PRE_BIND_PRE_FLIGHT, status, plugin_started)
        if status.is_skip:
            skipped.add(plugin.name)
        elif status.is_success:
            result = SUCCESS
        elif status.code is Code.ERROR:
            return stopped_at(profile, PRE_BIND_PRE_FLIGHT, plugin.name, status, started)
        else:
            unsupported = Status.from_error(
                f'PreBindPreFlight {plugin.name} returned "{status.code.label}", which is '
                "unsupported. It is supposed to return Success, Skip, or Error status"
            ).with_plugin(plugin.name)
            profile.observe(PRE_BIND_PRE_FLIGHT, unsupported, started)
            return unsupported
    state.skip_pre_bind_plugins = skipped
    return ended(profile, PRE_BIND_PRE_FLIGHT, started, result)


# Why this pod's PreBind was cancelled (a preemption's message), or None if it was not.
CancelCause = Callable[[], str | None]


async def run_pre_bind(
    profile: Profile,
    state: CycleState,
    pod: Pod,
    node_name: str,
    cancel_cause: CancelCause | None = None,
) -> Status:
    """Each PreBind plugin in turn. A plugin cancelled for a reason `cancel_cause` gives (a
    preemption) fails as an Error with that reason, as upstream reports a PreBind whose
    context was cancelled; any other cancellation (shutting down) ends the whole cycle."""
    started = time.perf_counter()
    for plugin in profile.pre_bind:
        if plugin.name in state.skip_pre_bind_plugins:
            continue
        plugin_started = time.perf_counter()
        try:
            status = await invoke.await_status(
                "PreBind", plugin.name, plugin.pre_bind, state, pod, node_name
            )
        except asyncio.CancelledError:
            cause = cancel_cause() if cancel_cause is not None else None
            task = asyncio.current_task()
            if cause is None or task is None:
                raise
            # Handled: the cycle goes on to report it, so the task is no longer cancelling.
            task.uncancel()
            status = Status.from_error(cause)
        profile.observe_duration(state, plugin.name, "PreBind", status, plugin_started)
        if not (status.is_success or status.is_skip):
            return stopped_at(profile, "PreBind", plugin.name, status, started)
    return ended(profile, "PreBind", started)


async def run_bind(profile: Profile, state: CycleState, pod: Pod, node_name: str) -> Status:
    """The first Bind plugin that does not Skip decides."""
    started = time.perf_counter()
    for plugin in profile.bind:
        plugin_started = time.perf_counter()
        status = await invoke.await_status("Bind", plugin.name, plugin.bind, state, pod, node_name)
        profile.observe_duration(state, plugin.name, "Bind", status, plugin_started)
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
        plugin_started = time.perf_counter()
        await invoke.await_for_effect(
            "PostBind", plugin.name, plugin.post_bind, state, pod, node_name
        )
        profile.observe_duration(state, plugin.name, "PostBind", SUCCESS, plugin_started)
    ended(profile, "PostBind", started)
