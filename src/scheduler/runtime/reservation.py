"""Reserve, Unreserve and Permit: the extension points between choosing a node and binding."""

from __future__ import annotations

import time
from dataclasses import dataclass

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.status import SUCCESS
from scheduler.framework.status import Code
from scheduler.framework.status import Status
from scheduler.objects.pod import Pod
from scheduler.observability import get_logger
from scheduler.runtime import invoke
from scheduler.runtime.chain_end import ended
from scheduler.runtime.chain_end import stopped_at
from scheduler.runtime.profile import Profile
from scheduler.runtime.waiting_pods import MAX_PERMIT_WAIT_SECONDS
from scheduler.runtime.waiting_pods import WaitingPod

_log = get_logger("scheduler.permit")


@dataclass(frozen=True, slots=True)
class PermitAnswer:
    """One Permit plugin's answer: its status and, for Wait, how long it asked to wait."""

    plugin: str
    status: Status
    timeout: float


def run_reserve(profile: Profile, state: CycleState, pod: Pod, node_name: str) -> Status:
    started = time.perf_counter()
    for plugin in profile.reserve:
        plugin_started = time.perf_counter()
        status = invoke.call_status("Reserve", plugin.name, plugin.reserve, state, pod, node_name)
        profile.observe_duration(state, plugin.name, "Reserve", status, plugin_started)
        if not status.is_success:
            return stopped_at(profile, "Reserve", plugin.name, status, started)
    return ended(profile, "Reserve", started)


def run_unreserve(profile: Profile, state: CycleState, pod: Pod, node_name: str) -> None:
    """Every Reserve plugin, in reverse order, whether or not its Reserve ran."""
    started = time.perf_counter()
    for plugin in reversed(profile.reserve):
        # A failing Unreserve is logged; the others must still give back what they hold.
        plugin_started = time.perf_counter()
        invoke.call_for_effect("Unreserve", plugin.name, plugin.unreserve, state, pod, node_name)
        profile.observe_duration(state, plugin.name, "Unreserve", SUCCESS, plugin_started)
    ended(profile, "Unreserve", started)


def run_permit(
    profile: Profile,
    state: CycleState,
    pod: Pod,
    node_name: str,
    answers: list[PermitAnswer] | None = None,
) -> Status:
    """Success, a rejection, an Error, or Wait (the pod is then registered as waiting). Each
    plugin's own answer is appended to `answers` when given (`explain` shows them)."""
    started = time.perf_counter()
    timeouts: dict[str, float] = {}
    for plugin in profile.permit:
        plugin_started = time.perf_counter()
        status, timeout = invoke.permit(plugin, state, pod, node_name)
        profile.observe_duration(state, plugin.name, "Permit", status, plugin_started)
        if answers is not None:
            answers.append(PermitAnswer(plugin.name, status, timeout))
        if status.is_wait:
            timeouts[plugin.name] = min(timeout, MAX_PERMIT_WAIT_SECONDS)
        elif not status.is_success:
            return stopped_at(profile, "Permit", plugin.name, status, started)
    if timeouts:
        profile.waiting_pods.add(WaitingPod(pod, node_name, timeouts, profile.handle.clock))
        waiting = Status(
            Code.WAIT,
            f'one or more plugins asked to wait and no plugin rejected pod "{pod.name}"',
        )
        return ended(profile, "Permit", started, waiting)
    return ended(profile, "Permit", started)


async def wait_on_permit(profile: Profile, pod: Pod) -> Status:
    """Hold the binding cycle until the pod's Permit wait ends: Success, the rejection as it
    is, or (the pod preempted while waiting) an Error in upstream's words."""
    waiting = profile.waiting_pods.get(pod.uid)
    if waiting is None:
        return Status()
    started = profile.handle.clock.now()
    try:
        status = await waiting.wait()
    finally:
        profile.waiting_pods.remove(pod.uid)
    profile.metrics.permit_wait(status.code.label, profile.handle.clock.now() - started)
    if status.is_success or status.is_rejected:
        return status
    # Preempted while waiting: the binding cycle fails the pod with this Error.
    error = Status.from_error(f"waiting on permit for pod: {status.message()}")
    _log.error("Failed waiting on permit for pod", pod=pod.key, err=error.message())
    return error.with_plugin(status.plugin)
