"""Pods held at Permit until every waiting plugin allows them, one rejects, or time runs out."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from collections.abc import Iterator
from collections.abc import Mapping

from scheduler.framework.clock import Clock
from scheduler.framework.clock import Timer
from scheduler.framework.durations import format_duration
from scheduler.framework.status import Code
from scheduler.framework.status import Status
from scheduler.objects.pod import Pod

# Upstream caps any Permit wait at 15 minutes.
MAX_PERMIT_WAIT_SECONDS = 15 * 60.0


def timed_out_message(plugin: str, wait: float) -> str:
    """Upstream's words for a Permit wait that `plugin` let run out after `wait` seconds."""
    return f"rejected due to timeout after waiting {format_duration(wait)} at plugin {plugin}"


class WaitingPod:
    """One pod waiting at Permit; satisfies scheduler.framework.handle.WaitingPod."""

    def __init__(
        self, pod: Pod, node_name: str, timeouts: Mapping[str, float], clock: Clock
    ) -> None:
        self._pod = pod
        self._node_name = node_name
        self._result: asyncio.Future[Status] = asyncio.get_running_loop().create_future()
        self._timers: dict[str, Timer] = {}
        for plugin, timeout in timeouts.items():
            wait = min(timeout, MAX_PERMIT_WAIT_SECONDS)
            self._timers[plugin] = clock.call_later(wait, self._expire_callback(plugin, wait))

    def _expire_callback(self, plugin: str, wait: float) -> Callable[[], None]:
        def expire() -> None:
            self.reject(plugin, timed_out_message(plugin, wait))

        return expire

    @property
    def pod(self) -> Pod:
        return self._pod

    @property
    def node_name(self) -> str:
        return self._node_name

    def pending_plugins(self) -> list[str]:
        return sorted(self._timers)

    @property
    def ended(self) -> bool:
        """Allowed, rejected or preempted already: the binding cycle is about to go on."""
        return self._result.done()

    def allow(self, plugin: str) -> None:
        timer = self._timers.pop(plugin, None)
        if timer is not None:
            timer.cancel()
        if not self._timers and not self._result.done():
            self._result.set_result(Status())

    def reject(self, plugin: str, message: str) -> bool:
        return self._end(Status(Code.UNSCHEDULABLE, message, plugin=plugin))

    def preempt(self, plugin: str, message: str) -> bool:
        # An Error, unlike a rejection, sends the pod to error backoff rather than waiting
        # for a cluster event: it lost its place to a preemptor, not for want of one.
        return self._end(Status(Code.ERROR, message, plugin=plugin))

    def _end(self, status: Status) -> bool:
        """End the wait with `status`; False if it had already ended (then nothing changes)."""
        for timer in self._timers.values():
            timer.cancel()
        self._timers.clear()
        if self._result.done():
            return False
        self._result.set_result(status)
        return True

    async def wait(self) -> Status:
        return await self._result


class WaitingPods:
    """Waiting pods by UID."""

    def __init__(self) -> None:
        self._pods: dict[str, WaitingPod] = {}

    def add(self, waiting: WaitingPod) -> None:
        self._pods[waiting.pod.uid] = waiting

    def remove(self, uid: str) -> None:
        self._pods.pop(uid, None)

    def get(self, uid: str) -> WaitingPod | None:
        return self._pods.get(uid)

    def reject_removed(self, uid: str) -> bool:
        """Reject the pod held under `uid` as removed, in the name of a plugin it still waits
        for (so that plugin's events retry it); False if none is held, or its wait had already
        ended."""
        waiting = self._pods.get(uid)
        if waiting is None:
            return False
        plugins = waiting.pending_plugins()
        return waiting.reject(plugins[0] if plugins else "", "removed")

    def __iter__(self) -> Iterator[WaitingPod]:
        return iter(list(self._pods.values()))

    def __len__(self) -> int:
        return len(self._pods)
