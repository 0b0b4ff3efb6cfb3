"""The scheduling queue: activeQ, backoffQ and the unschedulable pool, moved by cluster events.

Life of a pod: `add` puts it in activeQ (unless a PreEnqueue plugin gates it, then it waits in
the unschedulable pool as "gated"). `pop` hands it to a scheduling cycle and marks it in
flight. A failed attempt comes back through `add_unschedulable_if_not_present`, which replays
the events seen during the attempt through the QueueingHints: a helpful event sends the pod to
backoffQ (or straight to activeQ if its backoff is over, or if a Pending plugin asked); otherwise
it waits in the unschedulable pool for the next helpful event, or for the leftover flush.

Everything runs on one event loop, so no locking: each method completes before another starts.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable
from collections.abc import Iterable

from scheduler.backend.queue.backoff import BackoffPolicy
from scheduler.backend.queue.cluster_events import FORCE_ACTIVATE_EVENT
from scheduler.backend.queue.cluster_events import UNSCHEDULABLE_TIMEOUT_EVENT
from scheduler.backend.queue.cluster_events import event_label
from scheduler.backend.queue.cluster_events import pod_update_events
from scheduler.backend.queue.errors import QueueClosed
from scheduler.backend.queue.gating import PreEnqueue
from scheduler.backend.queue.hints import HintRegistrations
from scheduler.backend.queue.hints import HintTable
from scheduler.backend.queue.hints import QueueingStrategy
from scheduler.backend.queue.in_flight import POD_POPPED
from scheduler.backend.queue.in_flight import InFlightLog
from scheduler.backend.queue.in_flight import pod_identity
from scheduler.backend.queue.nominator import Nominator
from scheduler.backend.queue.observer import ACTIVE
from scheduler.backend.queue.observer import BACKOFF
from scheduler.backend.queue.observer import IN_FLIGHT
from scheduler.backend.queue.observer import POP_FROM_BACKOFF_Q
from scheduler.backend.queue.observer import NullObserver
from scheduler.backend.queue.observer import QueueObserver
from scheduler.backend.queue.sub_queues import LessFunc
from scheduler.backend.queue.sub_queues import RankFunc
from scheduler.backend.queue.sub_queues import SubQueues
from scheduler.backend.queue.waiters import PopWaiters
from scheduler.framework.clock import Clock
from scheduler.framework.events import ASSIGNED_POD_ADD
from scheduler.framework.events import ASSIGNED_POD_DELETE
from scheduler.framework.events import BACKOFF_COMPLETE
from scheduler.framework.events import FORCE_ACTIVATE
from scheduler.framework.events import SCHEDULE_ATTEMPT_FAILURE
from scheduler.framework.events import UNSCHEDULED_POD_ADD
from scheduler.framework.events import UNSCHEDULED_POD_UPDATE
from scheduler.framework.events import ClusterEvent
from scheduler.framework.queued_pod import QueuedPodInfo
from scheduler.objects.node import Node
from scheduler.objects.pod import Pod
from scheduler.observability import get_logger

logger = get_logger(__name__)

_MOVED = (ACTIVE, BACKOFF)

# kube-scheduler's podMaxInUnschedulablePodsDuration: how long, in seconds, a pod may wait in
# the unschedulable pool before the leftover flush moves it on.
DEFAULT_MAX_IN_UNSCHEDULABLE = 300.0


class SchedulingQueue:
    def __init__(
        self,
        *,
        less: LessFunc,
        rank: RankFunc | None = None,
        clock: Clock,
        pre_enqueue: PreEnqueue,
        hints: HintRegistrations,
        initial_backoff: float = 1.0,
        max_backoff: float = 10.0,
        max_in_unschedulable: float = DEFAULT_MAX_IN_UNSCHEDULABLE,
        observer: QueueObserver | None = None,
    ) -> None:
        """`rank`, the QueueSort plugin's `sort_key` if it has one, orders the active queue."""
        self._clock = clock
        self._observer: QueueObserver = observer or NullObserver()
        self._hints = HintTable(hints, self._observer)
        self._max_in_unschedulable = max_in_unschedulable
        self._queues = SubQueues(
            less=less,
            rank=rank,
            now=clock.now,
            pre_enqueue=pre_enqueue,
            backoff=BackoffPolicy(initial_backoff, max_backoff),
            observer=self._observer,
        )
        self._in_flight = InFlightLog()
        # (plugin, profile) pairs that have rejected some pod: their series stay, at 0.
        self._unschedulable_labels: set[tuple[str, str]] = set()
        self._nominator = Nominator()
        self._waiters = PopWaiters()
        self._cycle = 0
        self._closed = False

    # ----------------------------------------------------------------- informer-driven changes

    def add(self, pod: Pod) -> None:
        """A new unscheduled pod."""
        existing = self.get(pod.key)
        if existing is not None:
            # A repeated add (e.g. after a relist) is an update of what we hold.
            self.update(existing.pod, pod)
            return
        if pod_identity(pod) in self._in_flight:
            # Being scheduled right now; the attempt's outcome decides where it goes next.
            return
        self._enqueue_from_informer(pod, UNSCHEDULED_POD_ADD.label)

    def update(self, old: Pod, new: Pod) -> None:
        events = pod_update_events(old, new)
        # A pod being scheduled is requeued later from the informer's latest copy; remember the
        # change so that, if the attempt fails, the change can still release it.
        if self._in_flight.record_for_pod(new, events, old, new):
            return
        key = new.key
        info = self._queues.active.get(key)
        if info is not None:
            info.pod = new
            self._queues.active.add_or_update(info)
            self._nominator.update(old, new)
            return
        if self._queues.backoff.update(key, new) is not None:
            self._nominator.update(old, new)
            return
        info = self._queues.pool.get(key)
        if info is not None:
            info.pod = new
            self._nominator.update(old, new)
            for event in events:
                strategy = self._hints.strategy(info, event, old, new)
                if self._queues.requeue(info, strategy, event_label(event)) in _MOVED:
                    self._waiters.wake_all()
                    break
            return
        self._enqueue_from_informer(new, UNSCHEDULED_POD_UPDATE.label)

    def delete(self, pod: Pod) -> None:
        self._nominator.delete(pod)
        self._queues.delete(pod.key)

    # ------------------------------------------------------------------------ scheduling loop

    def pop(self) -> QueuedPodInfo | None:
        """The next pod to schedule, or None. Marks it in flight until `done`.

        When activeQ is empty the head of the plugin-rejected backoffQ is taken even if its
        backoff has not ended (PopFromBackoffQ): an idle scheduler should not sit out penalties.
        A closed queue hands out nothing.
        """
        if self._closed:
            return None
        while True:
            info = self._queues.active.pop()
            if info is None:
                info = self._queues.backoff.pop_rejected_head()
                if info is None:
                    return None
                self._observer.pod_incoming(ACTIVE, POP_FROM_BACKOFF_Q)
            if self._in_flight.start(info.pod):
                break
            logger.error("Pod is already in flight; discarding the duplicate entry", pod=info.key)
        info.attempts += 1
        self._cycle += 1
        # The caller records this attempt's rejectors; last attempt's must not linger.
        info.unschedulable_plugins = set()
        info.pending_plugins = set()
        info.gating_plugin = ""
        return info

    async def pop_wait(self) -> QueuedPodInfo:
        """Wait until a pod is available; raises QueueClosed once the queue is closed."""
        while True:
            if self._closed:
                raise QueueClosed("the scheduling queue is closed")
            info = self.pop()
            if info is not None:
                return info
            await self._waiters.wait()

    def done(self, pod: Pod) -> None:
        self._in_flight.done(pod)

    @property
    def scheduling_cycle(self) -> int:
        return self._cycle

    @property
    def closed(self) -> bool:
        return self._closed

    def add_unschedulable_if_not_present(
        self, info: QueuedPodInfo, pod_scheduling_cycle: int
    ) -> None:
        """Take back a pod whose attempt failed.

        The caller has set `info.unschedulable_plugins` / `pending_plugins`; both empty means
        the attempt failed with an error, which earns error backoff. Events that arrived during
        the attempt are replayed through the hints. `pod_scheduling_cycle` is accepted for
        interface parity; with QueueingHints the event log makes it unnecessary.
        """
        try:
            key = info.key
            if key in self._queues:
                logger.error("Pod is already in the scheduling queue; not re-adding it", pod=key)
                return
            if info.unschedulable_plugins or info.pending_plugins:
                info.unschedulable_count += 1
                info.consecutive_errors = 0
                profile = info.pod.scheduler_name
                for plugin in info.unschedulable_plugins | info.pending_plugins:
                    self._unschedulable_labels.add((plugin, profile))
            else:
                info.consecutive_errors += 1
            info.timestamp = self._clock.now()
            info.backoff_expiration = None
            info.flushed_from_unschedulable = False
            strategy = self._strategy_for_returning_pod(info)
            if self._queues.requeue(info, strategy, SCHEDULE_ATTEMPT_FAILURE) in _MOVED:
                self._waiters.wake_all()
        finally:
            self._in_flight.done(info.pod)

    # ------------------------------------------------------------------------ cluster events

    def move_all_to_active_or_backoff(
        self,
        event: ClusterEvent,
        old: object,
        new: object,
        precheck: Callable[[QueuedPodInfo], bool] | None = None,
    ) -> None:
        """Offer `event` to every pod in the unschedulable pool (that passes `precheck`)."""
        if not self._queues.pool and not self._in_flight:
            # Nobody to offer it to, now or when an attempt under way ends: the usual case for
            # each of the thousands of objects an informer's first list brings.
            return
        if not self._is_moving_event(event):
            return
        candidates: Iterable[QueuedPodInfo] = self._queues.pool
        if not event.is_wildcard:
            # Only pods one of whose plugins registered the event can be moved by it: looking
            # at them alone keeps an event cheap however many pods wait.
            plugins = self._hints.plugins_for(event)
            candidates = (info for info in candidates if HintTable.may_care(info, plugins))
        if precheck is not None:
            candidates = (info for info in candidates if precheck(info))
        self._move_pods(list(candidates), event, old, new)

    def assigned_pod_added(self, pod: Pod) -> None:
        # Every pod is offered the event and its hints decide, as kube-scheduler does with
        # QueueingHints; the older pre-filter by affinity terms ignored out-of-tree plugins.
        self.move_all_to_active_or_backoff(ASSIGNED_POD_ADD, None, pod)

    def assigned_pod_updated(self, old: Pod, new: Pod) -> list[tuple[str, float]]:
        """Requeue for each scheduling-relevant change of a bound pod; returns each change's
        event label with the seconds its requeueing took (upstream times each apart)."""
        moved: list[tuple[str, float]] = []
        for event in pod_update_events(old, new):
            started = time.perf_counter()
            self.move_all_to_active_or_backoff(event, old, new)
            moved.append((event_label(event), time.perf_counter() - started))
        return moved

    def assigned_pod_deleted(self, pod: Pod) -> None:
        self.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, pod, None)

    def node_event(self, event: ClusterEvent, old: Node | None, new: Node | None) -> None:
        self.move_all_to_active_or_backoff(event, old, new)

    def activate(self, pods: Iterable[Pod]) -> None:
        """Move pods from the unschedulable pool or backoffQ straight to activeQ.

        A pod that is in flight gets a ForceActivate event aimed at it instead, which requeues
        it if its attempt fails. Unknown pods are ignored.
        """
        activated = False
        for pod in pods:
            key = pod.key
            from_backoff = False
            info = self._queues.pool.get(key)
            if info is None:
                info = self._queues.backoff.delete(key)
                from_backoff = info is not None
            if info is None:
                self._in_flight.record_for_pod(pod, [FORCE_ACTIVATE_EVENT], None, pod)
                continue
            if self._queues.move_to_active(info, FORCE_ACTIVATE, from_backoff=from_backoff):
                activated = True
        if activated:
            self._waiters.wake_all()

    # ----------------------------------------------------------------------- periodic flushes

    def flush_backoff_completed(self) -> None:
        activated = False
        for info in self._queues.backoff.pop_completed():
            if self._queues.move_to_active(info, BACKOFF_COMPLETE, from_backoff=True):
                activated = True
        if activated:
            self._waiters.wake_all()

    def flush_unschedulable_leftover(self) -> None:
        """Give pods stuck longer than the limit a new chance, whatever the hints said."""
        stale = self._queues.pool.stayed_longer_than(self._max_in_unschedulable, self._clock.now())
        for info in stale:
            info.flushed_from_unschedulable = True
        if stale:
            self._move_pods(stale, UNSCHEDULABLE_TIMEOUT_EVENT, None, None)

    # ------------------------------------------------------------------------ introspection

    def pending_counts(self) -> dict[str, int]:
        return self._queues.counts()

    def in_flight_event_counts(self) -> dict[str, int]:
        """`scheduler_inflight_events`: pods in flight and the events kept for them, by label.
        A label once logged stays, at 0, as a gauge child does upstream: `PodPopped` from the
        first pop on, each event label from the first time one was kept."""
        counts = self._in_flight.counts_by_label()
        labels = self._in_flight.labels_logged
        if self._cycle:
            labels |= {POD_POPPED}
        return {label: counts.get(label, 0) for label in sorted(labels | counts.keys())}

    def unschedulable_plugin_counts(self) -> dict[tuple[str, str], int]:
        """(plugin, profile) -> queued pods whose last attempt that plugin rejected. A pair
        once seen stays, at 0, as upstream's gauge child does once a pod was counted there."""
        counts: Counter[tuple[str, str]] = Counter()
        for info in self.pending_pods():
            for plugin in info.unschedulable_plugins | info.pending_plugins:
                counts[(plugin, info.pod.scheduler_name)] += 1
        self._unschedulable_labels.update(counts)
        return {labels: counts.get(labels, 0) for labels in self._unschedulable_labels}

    def pending_pods(self) -> list[QueuedPodInfo]:
        return self._queues.all()

    def in_flight_pods(self) -> list[Pod]:
        return self._in_flight.pods()

    def summary(self) -> str:
        """Upstream's debug line."""
        return (
            f"activeQ:{len(self._queues.active)}; backoffQ:{len(self._queues.backoff)}; "
            f"unschedulablePods:{len(self._queues.pool)}"
        )

    def locate(self, key: str) -> str:
        """Where the pod is: active, backoff, unschedulable, gated, in-flight, or "" if unknown."""
        where = self._queues.locate(key)
        if where:
            return where
        if any(pod.key == key for pod in self._in_flight.pods()):
            return IN_FLIGHT
        return ""

    def get(self, key: str) -> QueuedPodInfo | None:
        """The queued pod with key `namespace/name`, in whichever sub-queue it is."""
        return self._queues.get(key)

    # ------------------------------------------------------------------------------ nominator

    def add_nominated_pod(self, pod: Pod, node_name: str) -> None:
        """Nominate `pod` to `node_name` (empty clears its nomination)."""
        self._nominator.add(pod, node_name)

    def delete_nominated_pod(self, pod: Pod) -> None:
        self._nominator.delete(pod)

    def nominated_pods_for_node(self, node_name: str) -> list[Pod]:
        return self._nominator.pods_for_node(node_name)

    def nominated_pods_by_node(self) -> dict[str, list[Pod]]:
        """All nominations at once; the Filter pass needs them per row, not per node name."""
        return self._nominator.by_node()

    def close(self) -> None:
        self._closed = True
        self._in_flight.clear()
        self._waiters.wake_all()

    # ------------------------------------------------------------------------------- internals

    def _enqueue_from_informer(self, pod: Pod, event: str) -> None:
        info = QueuedPodInfo(pod=pod, timestamp=self._clock.now())
        if self._queues.move_to_active(info, event):
            # A pod arriving with status.nominatedNodeName keeps holding its place.
            self._nominator.add(pod, pod.nominated_node_name)
            self._waiters.wake_all()

    def _strategy_for_returning_pod(self, info: QueuedPodInfo) -> QueueingStrategy:
        """Weigh the events seen while the pod was in flight."""
        if not (info.unschedulable_plugins or info.pending_plugins):
            return QueueingStrategy.AFTER_BACKOFF
        events = self._in_flight.events_since_pop(info.pod)
        if events is None:
            logger.error("Pod returned to the queue but was not in flight", pod=info.key)
            return QueueingStrategy.AFTER_BACKOFF
        return self._hints.strategy_for_replay(info, events)

    def registered(self, event: ClusterEvent) -> bool:
        """Whether some plugin of some profile registered an event matching `event`: the
        informers' handlers time only those, as kube-scheduler installs handlers for no
        others."""
        return self._hints.is_event_of_interest(event)

    def _is_moving_event(self, event: ClusterEvent) -> bool:
        # A node update that changed nothing relevant carries no action bits.
        if not event.is_wildcard and not event.action:
            return False
        return self._hints.is_event_of_interest(event)

    def _move_pods(
        self, infos: Iterable[QueuedPodInfo], event: ClusterEvent, old: object, new: object
    ) -> None:
        if not self._is_moving_event(event):
            return
        label = event_label(event)
        activated = False
        for info in infos:
            # A gated pod can only be released by its gating plugin's own events.
            if info.gated and not self._hints.gating_plugin_interested(info, event):
                continue
            strategy = self._hints.strategy(info, event, old, new)
            if strategy is QueueingStrategy.SKIP:
                continue
            self._queues.pool.delete(info.key)
            if self._queues.requeue(info, strategy, label) in _MOVED:
                activated = True
        # Pods in flight may come back unschedulable; they must still see this event.
        self._in_flight.record(event, old, new)
        if activated:
            self._waiters.wake_all()
