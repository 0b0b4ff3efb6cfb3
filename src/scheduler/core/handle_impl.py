"""The scheduler's implementation of the plugin Handle."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any
from typing import Unpack

from scheduler.backend.cache import SchedulerCache
from scheduler.backend.queue import SchedulingQueue
from scheduler.cluster.port import ClusterClient
from scheduler.config.feature_gates import FeatureGates
from scheduler.core.event_recorder import EventRecorder
from scheduler.framework.extenders import NO_EXTENDERS
from scheduler.framework.extenders import Extenders
from scheduler.framework.handle import ClusterAPI
from scheduler.framework.handle import EventDetails
from scheduler.framework.handle import IndexFunc
from scheduler.framework.handle import Lister
from scheduler.framework.handle import ObjectReference
from scheduler.framework.handle import PluginMetrics
from scheduler.framework.handle import PodInPreBind
from scheduler.framework.handle import WaitingPod
from scheduler.framework.node_info import NodeInfo
from scheduler.framework.node_table import NodeTable
from scheduler.objects.pod import Pod
from scheduler.observability import get_logger
from scheduler.runtime.handle_base import HandleBase
from scheduler.runtime.handle_base import ProfileFacts
from scheduler.runtime.node_filter import FilterChain
from scheduler.runtime.pods_in_pre_bind import PodsInPreBind
from scheduler.runtime.waiting_pods import WaitingPods

_log = get_logger(__name__)


class _EmptyLister:
    def get(self, namespace: str, name: str) -> Mapping[str, Any] | None:
        return None

    def list(self, namespace: str | None = None) -> Sequence[Mapping[str, Any]]:
        return []

    def add_index(self, name: str, index: IndexFunc) -> None:
        return None

    def by_index(self, name: str, value: str) -> Sequence[Mapping[str, Any]]:
        return []

    @property
    def revision(self) -> int:
        return 0

    def changed_since(self, revision: int) -> Sequence[tuple[str, str]] | None:
        return ()


# The lister of a resource no informer watches. One object, so that readers which remember
# the lister and its revision (to skip work when nothing changed) see nothing change.
_NOTHING_WATCHED = _EmptyLister()


class LeaderWork:
    """The work plugins keep for the replica that schedules (status writers, reconciles),
    shared by every profile's handle. Plugins register it while they are built, before any
    informer has listed; the scheduler starts it once this replica schedules with synced
    caches, so it runs whether or not a pod is pending, and cancels it when it stops."""

    def __init__(self) -> None:
        self._starters: list[Callable[[], asyncio.Task[None]]] = []
        self._tasks: list[asyncio.Task[None]] = []
        self._running = False

    def add(self, start: Callable[[], asyncio.Task[None]]) -> None:
        self._starters.append(start)
        if self._running:
            self._tasks.append(start())

    def start(self) -> None:
        """Start every registered work (idempotent while it runs)."""
        if self._running:
            return
        self._running = True
        self._tasks = [start() for start in self._starters]

    def cancel(self) -> None:
        """Cancel the work; a later `start` runs it afresh."""
        self._running = False
        for task in self._tasks:
            task.cancel()
        self._tasks = []


class SchedulerHandle(HandleBase):
    """One per profile; everything reads the shared cache, queue and informer stores."""

    def __init__(
        self,
        *,
        cache: SchedulerCache,
        client: ClusterClient,
        listers: Mapping[str, Lister],
        waiting_pods: WaitingPods,
        pods_in_pre_bind: PodsInPreBind,
        tasks: set[asyncio.Task[None]],
        one_off: set[asyncio.Task[None]],
        leader_work: LeaderWork,
        plugin_metrics: PluginMetrics,
        api: ClusterAPI | None = None,
        extenders: Extenders = NO_EXTENDERS,
        features: FeatureGates | None = None,
        **facts: Unpack[ProfileFacts],
    ) -> None:
        # What plugins write through: the client itself, or the leader-fenced view of it.
        writes = api if api is not None else client
        super().__init__(
            api=writes,
            plugin_metrics=plugin_metrics,
            extenders=extenders,
            features=features,
            **facts,
        )
        self._cache = cache
        self._client = client
        self._listers = listers
        self._waiting_pods = waiting_pods
        self._pods_in_pre_bind = pods_in_pre_bind
        self._tasks = tasks
        self._one_off = one_off
        self._leader_work = leader_work
        self.queue: SchedulingQueue | None = None
        # Set once the profile and the recorder exist (they are built after the handle).
        self.chain: FilterChain | None = None
        self.recorder: EventRecorder | None = None

    @property
    def node_table(self) -> NodeTable:
        return self._cache.table

    def node_info(self, name: str) -> NodeInfo | None:
        return self._cache.node_info(name)

    def lister(self, resource: str) -> Lister:
        # Not `or`: an informer's store holding nothing yet is falsy, and is still the lister.
        found = self._listers.get(resource)
        return found if found is not None else _NOTHING_WATCHED

    def nominated_pods_for_node(self, node_name: str) -> Sequence[Pod]:
        return self.queue.nominated_pods_for_node(node_name) if self.queue is not None else []

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        return self._waiting_pods.get(uid)

    def iterate_over_waiting_pods(self) -> Iterator[WaitingPod]:
        return iter(self._waiting_pods)

    def get_pod_in_pre_bind(self, uid: str) -> PodInPreBind | None:
        return self._pods_in_pre_bind.get(uid)

    def reject_waiting_pod(self, uid: str) -> bool:
        return self._waiting_pods.reject_removed(uid)

    def start_background(
        self, name: str, work: Callable[[], Awaitable[None]], *, one_off: bool = False
    ) -> None:
        task = self._spawn(name, work)
        if one_off:
            self._one_off.add(task)
            task.add_done_callback(self._one_off.discard)

    def start_when_leading(self, name: str, work: Callable[[], Awaitable[None]]) -> None:
        self._leader_work.add(lambda: self._spawn(name, work))

    def _spawn(self, name: str, work: Callable[[], Awaitable[None]]) -> asyncio.Task[None]:
        async def run() -> None:
            try:
                await work()
            except asyncio.CancelledError:
                raise
            except Exception:
                _log.exception("Background task failed", task=name)

        task = asyncio.create_task(run(), name=f"plugin:{self.profile_name}:{name}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def activate(self, pods: Iterable[Pod]) -> None:
        if self.queue is not None:
            self.queue.activate(pods)

    def _filter_chain(self) -> FilterChain:
        if self.chain is None:
            raise RuntimeError("the profile's plugins are not built yet")
        return self.chain

    def _recorder(self) -> EventRecorder:
        if self.recorder is None:
            raise RuntimeError("the event recorder is not built yet")
        return self.recorder

    def record_event(
        self, regarding: Pod, *, related: Pod | None = None, **details: Unpack[EventDetails]
    ) -> None:
        recorder = self._recorder()
        recorder.pod_event(regarding, controller=self.profile_name, related=related, **details)

    def record_object_event(
        self, regarding: ObjectReference, **details: Unpack[EventDetails]
    ) -> None:
        self._recorder().object_event(regarding, controller=self.profile_name, **details)
