"""QueueingHints: deciding whether a cluster event may make a rejected pod schedulable.

Only the plugins that rejected the pod are asked, and only through the hints they registered
for events matching the incoming one. A Queue from a plugin that answered Pending skips the
backoff; a Queue from a plugin that answered Unschedulable requeues after backoff; if every
hint says QueueSkip the pod stays where it is.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from scheduler.backend.queue.cluster_events import event_label
from scheduler.backend.queue.in_flight import RecordedEvent
from scheduler.backend.queue.observer import QueueObserver
from scheduler.framework.events import ClusterEvent
from scheduler.framework.events import ClusterEventWithHint
from scheduler.framework.events import EventResource
from scheduler.framework.events import QueueingHint
from scheduler.framework.queued_pod import QueuedPodInfo
from scheduler.objects.pod import Pod
from scheduler.observability import get_logger

logger = get_logger(__name__)

# The `hint` label of the hint duration metric.
_QUEUE = "Queue"
_QUEUE_SKIP = "QueueSkip"
_ERROR = "Error"

HintRegistrations = Mapping[str, Sequence[tuple[str, ClusterEventWithHint]]]
"""Profile (schedulerName) -> (plugin name, registration) pairs."""


class QueueingStrategy(IntEnum):
    """Where an event sends a pod; a higher value wins when several events are weighed."""

    SKIP = 0
    AFTER_BACKOFF = 1
    IMMEDIATELY = 2


@dataclass(frozen=True, slots=True)
class _Registration:
    plugin: str
    event: ClusterEvent
    hint: ClusterEventWithHint


class HintTable:
    """The registrations of every profile, indexed for the questions the queue asks."""

    __slots__ = ("_by_profile", "_events_by_plugin", "_observer", "_plugins_for")

    def __init__(self, registrations: HintRegistrations, observer: QueueObserver) -> None:
        self._observer = observer
        self._by_profile: dict[str, tuple[_Registration, ...]] = {
            profile: tuple(_Registration(plugin, reg.event, reg) for plugin, reg in entries)
            for profile, entries in registrations.items()
        }
        self._events_by_plugin: dict[tuple[str, str], tuple[ClusterEvent, ...]] = {}
        for profile, regs in self._by_profile.items():
            for reg in regs:
                key = (profile, reg.plugin)
                self._events_by_plugin[key] = (*self._events_by_plugin.get(key, ()), reg.event)
        # Registrations never change, and the same few events recur for every pod and node.
        self._plugins_for: dict[ClusterEvent, frozenset[str]] = {}

    def is_event_of_interest(self, event: ClusterEvent) -> bool:
        """Some plugin in some profile registered an event matching this one."""
        return event.is_wildcard or bool(self.plugins_for(event))

    def plugins_for(self, event: ClusterEvent) -> frozenset[str]:
        """The plugins, in any profile, that registered an event matching this one (not for a
        wildcard event, which every plugin hears)."""
        known = self._plugins_for.get(event)
        if known is None:
            known = frozenset(
                reg.plugin
                for regs in self._by_profile.values()
                for reg in regs
                if reg.event.matches(event)
            )
            self._plugins_for[event] = known
        return known

    @staticmethod
    def may_care(info: QueuedPodInfo, plugins: frozenset[str]) -> bool:
        """Whether an event these plugins registered can move the pod at all: a gated pod
        through its gating plugin, another through one of its rejectors (a pod with none
        failed with an error, and any event retries it). The hints decide the rest."""
        if info.gated:
            return info.gating_plugin in plugins
        rejectors = info.unschedulable_plugins or info.pending_plugins
        if not rejectors:
            return True
        return not (
            plugins.isdisjoint(info.unschedulable_plugins)
            and plugins.isdisjoint(info.pending_plugins)
        )

    def gating_plugin_interested(self, info: QueuedPodInfo, event: ClusterEvent) -> bool:
        """For a gated pod: did the gating plugin register an event matching this one?"""
        events = self._events_by_plugin.get((info.pod.scheduler_name, info.gating_plugin), ())
        return any(registered.matches(event) for registered in events)

    def strategy(
        self, info: QueuedPodInfo, event: ClusterEvent, old: Any, new: Any
    ) -> QueueingStrategy:
        """How `event` should move the pod out of the unschedulable pool, if at all."""
        rejectors = info.unschedulable_plugins | info.pending_plugins
        # kube-scheduler never offers one pending pod's arrival or change to the others; we
        # do, for gangs, but only a hint can tell whether it concerns this pod: without one
        # (the extenders' rejector, a pod that failed with an error) it does not move it.
        about_another = _about_another_pending_pod(info, event, old, new)
        if not rejectors:
            # Failed with an error, not by a plugin: retry after backoff on any event.
            return QueueingStrategy.SKIP if about_another else QueueingStrategy.AFTER_BACKOFF
        if event.is_wildcard:
            # A wildcard aimed at one pod (ForceActivate of an in-flight pod) spares the rest.
            if new is not None and (not isinstance(new, Pod) or new.uid != info.pod.uid):
                return QueueingStrategy.SKIP
            return QueueingStrategy.AFTER_BACKOFF
        regs = self._by_profile.get(info.pod.scheduler_name)
        if regs is None:
            logger.error(
                "No queueing hints registered for the profile",
                profile=info.pod.scheduler_name,
                pod=info.key,
            )
            return QueueingStrategy.AFTER_BACKOFF
        result = QueueingStrategy.SKIP
        for reg in regs:
            if reg.plugin not in rejectors or not reg.event.matches(event):
                continue
            if about_another and reg.hint.hint is None:
                continue
            if self._call_hint(reg, info.pod, event, old, new) is QueueingHint.QUEUE_SKIP:
                continue
            if reg.plugin in info.pending_plugins:
                return QueueingStrategy.IMMEDIATELY
            if not info.pending_plugins:
                # Nothing could upgrade this to IMMEDIATELY; stop asking.
                return QueueingStrategy.AFTER_BACKOFF
            result = QueueingStrategy.AFTER_BACKOFF
        return result

    def _call_hint(
        self, reg: _Registration, pod: Pod, event: ClusterEvent, old: Any, new: Any
    ) -> QueueingHint:
        """The registration's hint (Queue where it has none), timed for
        `scheduler_queueing_hint_execution_duration_seconds` as upstream times every call."""
        fn = reg.hint.hint
        started = time.perf_counter()
        if fn is None:
            hint, label = QueueingHint.QUEUE, _QUEUE
        else:
            try:
                hint = QueueingHint(fn(pod, old, new))
                label = _QUEUE if hint is QueueingHint.QUEUE else _QUEUE_SKIP
            except Exception:
                # A failing hint must not strand the pod in the pool: treat it as Queue.
                logger.exception(
                    "Queueing hint failed",
                    plugin=reg.plugin,
                    cluster_event=event_label(event),
                    pod=pod.key,
                )
                hint, label = QueueingHint.QUEUE, _ERROR
        seconds = time.perf_counter() - started
        self._observer.queueing_hint_duration(reg.plugin, event_label(event), label, seconds)
        return hint

    def strategy_for_replay(
        self, info: QueuedPodInfo, events: Iterable[RecordedEvent]
    ) -> QueueingStrategy:
        """The strongest strategy any of `events` earns the pod (events seen while in flight)."""
        result = QueueingStrategy.SKIP
        for recorded in events:
            strategy = self.strategy(info, recorded.event, recorded.old, recorded.new)
            if strategy is QueueingStrategy.IMMEDIATELY:
                return strategy
            if strategy is QueueingStrategy.AFTER_BACKOFF:
                result = strategy
                if not info.pending_plugins:
                    return result
        return result


def _about_another_pending_pod(
    info: QueuedPodInfo, event: ClusterEvent, old: Any, new: Any
) -> bool:
    if event.resource is not EventResource.UNSCHEDULED_POD:
        return False
    changed = new if isinstance(new, Pod) else old
    return isinstance(changed, Pod) and changed.uid != info.pod.uid
