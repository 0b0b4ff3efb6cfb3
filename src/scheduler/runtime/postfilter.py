"""PostFilter: give plugins (preemption) a chance after no node fits.

Plugins run in order, as upstream's RunPostFilterPlugins runs them: a Success, an
UnschedulableAndUnresolvable or an Error ends the chain with that plugin's answer; otherwise
the chain ends Unschedulable with every plugin's reasons joined, the first rejecting plugin
named, and the last result that changes the nomination.

`run_post_filter` is the synchronous chain; `run_post_filter_awaiting` is the same chain for
an attempt that awaits HTTP extenders, where a plugin that can await them
(`AwaitingPostFilterPlugin`) is awaited instead. `_Chain` keeps the rules in one place.
"""

from __future__ import annotations

import time

from scheduler.framework.cycle_state import CycleState
from scheduler.framework.plugins import AwaitingPostFilterPlugin
from scheduler.framework.plugins import NodeStatusReader
from scheduler.framework.plugins import NominatingMode
from scheduler.framework.plugins import PostFilterPlugin
from scheduler.framework.plugins import PostFilterResult
from scheduler.framework.status import Code
from scheduler.framework.status import Status
from scheduler.objects.pod import Pod
from scheduler.runtime import invoke
from scheduler.runtime.profile import Profile

Outcome = tuple[PostFilterResult | None, Status]


class _Chain:
    """Folds each plugin's answer into the chain's; `ended` is set once the chain is decided."""

    def __init__(self, profile: Profile, state: CycleState) -> None:
        self._profile = profile
        self._state = state
        self._started = time.perf_counter()
        self._result: PostFilterResult | None = None
        self._reasons: list[str] = []
        self._rejector = ""
        self.ended: Outcome | None = None

    def take(self, plugin: PostFilterPlugin, answer: Outcome, started: float) -> bool:
        """Fold in `plugin`'s answer (its call began at `started`); True once decided."""
        plugin_result, status = answer
        self._profile.observe_duration(self._state, plugin.name, "PostFilter", status, started)
        if status.is_success or status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
            self.ended = self._observed(plugin_result, status.with_plugin(plugin.name))
        elif not status.is_rejected:
            error = (
                status
                if isinstance(status, invoke.PluginFault)
                else Status.from_error(status.message()).with_plugin(plugin.name)
            )
            self.ended = self._observed(None, error)
        else:
            if plugin_result is not None and plugin_result.mode is not NominatingMode.NOOP:
                self._result = plugin_result
            self._reasons.extend(status.reasons)
            self._rejector = self._rejector or plugin.name
        return self.ended is not None

    def outcome(self) -> Outcome:
        if self.ended is not None:
            return self.ended
        final = Status(Code.UNSCHEDULABLE, *self._reasons, plugin=self._rejector)
        return self._observed(self._result, final)

    def _observed(self, result: PostFilterResult | None, status: Status) -> Outcome:
        self._profile.observe("PostFilter", status, self._started)
        return result, status


def run_post_filter(
    profile: Profile, state: CycleState, pod: Pod, statuses: NodeStatusReader
) -> Outcome:
    chain = _Chain(profile, state)
    for plugin in profile.post_filter:
        started = time.perf_counter()
        if chain.take(plugin, invoke.post_filter(plugin, state, pod, statuses), started):
            break
    return chain.outcome()


async def run_post_filter_awaiting(
    profile: Profile, state: CycleState, pod: Pod, statuses: NodeStatusReader
) -> Outcome:
    chain = _Chain(profile, state)
    for plugin in profile.post_filter:
        started = time.perf_counter()
        if isinstance(plugin, AwaitingPostFilterPlugin):
            answer = await invoke.post_filter_awaiting(plugin, state, pod, statuses)
        else:
            answer = invoke.post_filter(plugin, state, pod, statuses)
        if chain.take(plugin, answer, started):
            break
    return chain.outcome()
