"""Run plugins outside the scheduler: a node table from objects and a Handle over it."""

from __future__ import annotations

import random
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any
from typing import Unpack

import numpy as np

from scheduler.config.feature_gates import FeatureGates
from scheduler.framework.batch import FilterBatch
from scheduler.framework.change_log import ChangeLog
from scheduler.framework.clock import Clock
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.errors import NotFoundError
from scheduler.framework.extenders import NO_EXTENDERS
from scheduler.framework.extenders import Extenders
from scheduler.framework.handle import ClusterAPI
from scheduler.framework.handle import EventDetails
from scheduler.framework.handle import IndexFunc
from scheduler.framework.handle import Lister
from scheduler.framework.handle import ObjectReference
from scheduler.framework.handle import PodInPreBind
from scheduler.framework.handle import WaitingPod
from scheduler.framework.node_info import NodeInfo
from scheduler.framework.node_table import NodeTable
from scheduler.framework.plugins import BatchFilterPlugin
from scheduler.framework.plugins import BatchScorePlugin
from scheduler.framework.plugins import FilterPlugin
from scheduler.framework.plugins import Rows
from scheduler.framework.plugins import ScorePlugin
from scheduler.framework.status import Code
from scheduler.framework.status import Status
from scheduler.objects.node import Node
from scheduler.objects.pod import Pod
from scheduler.observability import SchedulerMetrics
from scheduler.runtime.handle_base import HandleBase
from scheduler.runtime.node_filter import FilterChain
from scheduler.testing.fake_clock import FakeClock


def build_table(nodes: Iterable[Node], pods: Iterable[Pod] = ()) -> NodeTable:
    """A node table holding `nodes`, with each pod in `pods` placed on its spec.nodeName."""
    infos: dict[str, NodeInfo] = {}
    for node in nodes:
        infos[node.name] = NodeInfo(node)
    for pod in pods:
        if pod.node_name in infos:
            infos[pod.node_name].add_pod(pod)
    table = NodeTable()
    for info in infos.values():
        table.upsert_node(info)
        if info.node is not None:
            table.add_images(info.name, info.node.images)
    return table


class DictLister:
    """A Lister over raw objects given up front."""

    def __init__(self, objects: Iterable[Mapping[str, Any]] = ()) -> None:
        self._objects: dict[tuple[str, str], Mapping[str, Any]] = {}
        self._indices: dict[str, IndexFunc] = {}
        self._changes = ChangeLog()
        for obj in objects:
            self.add(obj)

    def add(self, obj: Mapping[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        key = (str(meta.get("namespace") or ""), str(meta.get("name")))
        self._objects[key] = obj
        self._changes.record(key)

    def remove(self, namespace: str, name: str) -> None:
        if self._objects.pop((namespace, name), None) is not None:
            self._changes.record((namespace, name))

    @property
    def revision(self) -> int:
        return self._changes.revision

    def changed_since(self, revision: int) -> Sequence[tuple[str, str]] | None:
        return self._changes.since(revision)

    def get(self, namespace: str, name: str) -> Mapping[str, Any] | None:
        return self._objects.get((namespace, name))

    def list(self, namespace: str | None = None) -> Sequence[Mapping[str, Any]]:
        return [o for (ns, _), o in self._objects.items() if namespace is None or ns == namespace]

    def add_index(self, name: str, index: IndexFunc) -> None:
        self._indices.setdefault(name, index)

    def by_index(self, name: str, value: str) -> Sequence[Mapping[str, Any]]:
        index = self._indices[name]
        return [o for o in self._objects.values() if index(o) == value]


class RecordingAPI:
    """A ClusterAPI that records calls instead of making them."""

    def __init__(self) -> None:
        self.bindings: list[tuple[str, str]] = []
        self.deleted: list[str] = []
        self.status_patches: list[tuple[str, Mapping[str, Any]]] = []
        self.object_patches: list[tuple[str, str, Mapping[str, Any]]] = []
        self.created: list[tuple[str, Mapping[str, Any]]] = []
        self.deleted_objects: list[tuple[str, str]] = []

    async def bind(self, pod: Pod, node_name: str) -> None:
        self.bindings.append((pod.key, node_name))

    async def delete_pod(self, namespace: str, name: str, uid: str = "") -> None:
        self.deleted.append(f"{namespace}/{name}")

    async def patch_pod_status(self, namespace: str, name: str, patch: Mapping[str, Any]) -> None:
        self.status_patches.append((f"{namespace}/{name}", patch))

    async def get(self, resource: str, namespace: str, name: str) -> dict[str, Any]:
        raise NotFoundError(f'{resource} "{name}" not found')

    async def patch_object(
        self,
        resource: str,
        namespace: str,
        name: str,
        patch: Mapping[str, Any],
        subresource: str = "",
    ) -> None:
        del subresource  # recorded patches read the same either way
        self.object_patches.append((resource, f"{namespace}/{name}", patch))

    async def create(self, resource: str, obj: Mapping[str, Any]) -> dict[str, Any]:
        self.created.append((resource, obj))
        return dict(obj)

    async def delete(self, resource: str, namespace: str, name: str) -> None:
        self.deleted_objects.append((resource, f"{namespace}/{name}"))


class FakeHandle(HandleBase):
    """A Handle over a fixed node table, for plugin unit tests."""

    def __init__(
        self,
        table: NodeTable | None = None,
        *,
        clock: Clock | None = None,
        seed: int = 0,
        listers: Mapping[str, Iterable[Mapping[str, Any]]] | None = None,
        nominated: Mapping[str, Sequence[Pod]] | None = None,
        api: ClusterAPI | None = None,
        chain: FilterChain | None = None,
        metrics: SchedulerMetrics | None = None,
        extenders: Extenders = NO_EXTENDERS,
        gates: Mapping[str, bool] | None = None,
    ) -> None:
        """`chain` holds the PreFilter/Filter plugins that preemption-style plugins run through
        the handle, and `extenders` the HTTP extenders they ask; `gates` sets feature gates
        away from v1.36's defaults. Events plugins record land in `self.events`, pods they
        activate in `self.activated`, and metrics they record in `self.metrics` (its own
        registry unless one is given)."""
        self.metrics = metrics if metrics is not None else SchedulerMetrics()
        super().__init__(
            profile_name="default-scheduler",
            clock=clock or FakeClock(),
            rng=random.Random(seed),
            parallelism=16,
            api=api or RecordingAPI(),
            plugin_metrics=self.metrics,
            extenders=extenders,
            features=FeatureGates(dict(gates or {})),
        )
        self.table = table or NodeTable()
        self._listers = {k: DictLister(v) for k, v in (listers or {}).items()}
        self._nominated = dict(nominated or {})
        self.chain = chain or FilterChain((), ())
        # Background work plugins started, by name, for a test to run when it chooses.
        self.background_work: dict[str, Callable[[], Awaitable[None]]] = {}
        # Work plugins keep for the replica that schedules, by name, likewise.
        self.leader_work: dict[str, Callable[[], Awaitable[None]]] = {}
        # Pods a test puts at PreBind, by UID, for plugins that look them up (preemption).
        self.pods_in_pre_bind: dict[str, PodInPreBind] = {}
        self.events: list[dict[str, Any]] = []
        self.activated: list[str] = []

    @property
    def node_table(self) -> NodeTable:
        return self.table

    def node_info(self, name: str) -> NodeInfo | None:
        row = self.table.row_of(name)
        return None if row is None else self.table.node_infos[row]

    def lister(self, resource: str) -> Lister:
        return self._listers.setdefault(resource, DictLister())

    def nominated_pods_for_node(self, node_name: str) -> Sequence[Pod]:
        return self._nominated.get(node_name, ())

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        return None

    def iterate_over_waiting_pods(self) -> Iterator[WaitingPod]:
        return iter(())

    def reject_waiting_pod(self, uid: str) -> bool:
        return False

    def get_pod_in_pre_bind(self, uid: str) -> PodInPreBind | None:
        return self.pods_in_pre_bind.get(uid)

    def start_background(
        self, name: str, work: Callable[[], Awaitable[None]], *, one_off: bool = False
    ) -> None:
        """Record the work instead of running it: a test awaits `background_work[name]()` (or one
        step of it) when it wants, so nothing runs behind its back."""
        self.background_work[name] = work

    def start_when_leading(self, name: str, work: Callable[[], Awaitable[None]]) -> None:
        """Record the work as `start_background` does, in `leader_work`: the test kit's
        replica always leads, and a test runs the work when it wants."""
        self.leader_work[name] = work

    def activate(self, pods: Iterable[Pod]) -> None:
        self.activated.extend(pod.key for pod in pods)

    def _filter_chain(self) -> FilterChain:
        return self.chain

    def record_event(
        self, regarding: Pod, *, related: Pod | None = None, **details: Unpack[EventDetails]
    ) -> None:
        self._record(regarding.key, details, related.key if related is not None else None)

    def record_object_event(
        self, regarding: ObjectReference, **details: Unpack[EventDetails]
    ) -> None:
        self._record(f"{regarding.kind} {regarding.namespace}/{regarding.name}", details, None)

    def _record(self, regarding: str, details: EventDetails, related: str | None) -> None:
        self.events.append(
            {
                "regarding": regarding,
                "type": details["event_type"],
                "reason": details["reason"],
                "action": details["action"],
                "note": details["note"],
                "related": related,
            }
        )


def filter_each_node(
    plugin: FilterPlugin, state: CycleState, pod: Pod, table: NodeTable
) -> list[Status]:
    """The per-node Filter form over every row of the table."""
    return [plugin.filter(state, pod, table.node_infos[row]) for row in range(table.size)]


def filter_batch_as_statuses(
    plugin: BatchFilterPlugin,
    state: CycleState,
    pod: Pod,
    table: NodeTable,
    rows: Rows | None = None,
) -> list[Status]:
    """The batch Filter form over `rows` (default: every row), one Status per given row."""
    rows = table.all_rows() if rows is None else rows
    batch: FilterBatch = plugin.filter_nodes(state, pod, table, rows)
    statuses = []
    for i in range(len(rows)):
        code = Code(int(batch.codes[i]))
        statuses.append(Status() if code is Code.SUCCESS else Status(code, *batch.reasons_at(i)))
    return statuses


def score_each_node(
    plugin: ScorePlugin, state: CycleState, pod: Pod, table: NodeTable
) -> list[int]:
    scores = []
    for row in range(table.size):
        score, status = plugin.score(state, pod, table.node_infos[row])
        assert status.is_success, status
        scores.append(score)
    return scores


def score_batch(
    plugin: BatchScorePlugin,
    state: CycleState,
    pod: Pod,
    table: NodeTable,
    rows: Rows | None = None,
) -> list[int]:
    """The batch Score form over `rows` (default: every row)."""
    rows = table.all_rows() if rows is None else rows
    scores = plugin.score_nodes(state, pod, table, rows)
    return [int(s) for s in np.asarray(scores)]
