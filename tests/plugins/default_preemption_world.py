"""A small cluster for DefaultPreemption tests: real in-tree Filter plugins behind a FakeHandle
that keeps background work for the test to run, and Filter outcomes computed like a cycle."""

from __future__ import annotations

import copy
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from plugins.default_preemption import DefaultPreemption
from plugins.default_preemption import DefaultPreemptionArgs
from plugins.inter_pod_affinity import InterPodAffinity
from plugins.inter_pod_affinity import InterPodAffinityArgs
from plugins.node_resources_fit import NodeResourcesFit
from plugins.node_resources_fit import NodeResourcesFitArgs
from plugins.node_unschedulable import NodeUnschedulable
from scheduler.framework import CycleState
from scheduler.framework import FilterPlugin
from scheduler.framework import Node
from scheduler.framework import Pod
from scheduler.framework import PostFilterResult
from scheduler.framework import PreFilterPlugin
from scheduler.framework import Status
from scheduler.framework import WaitingPod
from scheduler.framework.errors import APIError
from scheduler.framework.extenders import NO_EXTENDERS
from scheduler.framework.extenders import Extenders
from scheduler.runtime.node_filter import FilterChain
from scheduler.testing import FakeHandle
from scheduler.testing import build_table
from scheduler.testing import make_pod
from scheduler.testing.plugin_harness import RecordingAPI


class Statuses:
    """Filter outcomes by node name: the NodeStatusReader PostFilter receives."""

    def __init__(self, statuses: Mapping[str, Status]) -> None:
        self._statuses = dict(statuses)

    def status_of(self, node_name: str) -> Status:
        return self._statuses.get(node_name, Status())

    def nodes_with_code(self, code: int) -> list[str]:
        return [n for n, s in self._statuses.items() if int(s.code) == code]


class API(RecordingAPI):
    """Records the UID precondition of deletes too, and fails calls on pods named in `fail`
    (every call) or `fail_delete` (deletes only)."""

    def __init__(self) -> None:
        super().__init__()
        self.delete_uids: list[str] = []
        self.fail: dict[str, APIError] = {}
        self.fail_delete: dict[str, APIError] = {}
        self.calls: list[str] = []

    def _check(self, namespace: str, name: str, failing: Mapping[str, APIError]) -> None:
        error = failing.get(f"{namespace}/{name}")
        if error is not None:
            raise error

    async def delete_pod(self, namespace: str, name: str, uid: str = "") -> None:
        self.calls.append(f"delete {namespace}/{name}")
        self._check(namespace, name, {**self.fail, **self.fail_delete})
        await super().delete_pod(namespace, name, uid)
        self.delete_uids.append(uid)

    async def patch_pod_status(self, namespace: str, name: str, patch: Mapping[str, Any]) -> None:
        self.calls.append(f"patch {namespace}/{name}")
        self._check(namespace, name, self.fail)
        await super().patch_pod_status(namespace, name, patch)


class FakeWaitingPod:
    """Records what it is told; `ended` is whether its wait is already over (a preemption
    then changes nothing)."""

    def __init__(self, pod: Pod, node_name: str, *, ended: bool = False) -> None:
        self._pod = pod
        self._node_name = node_name
        self.ended = ended
        self.rejections: list[tuple[str, str]] = []
        self.preemptions: list[tuple[str, str]] = []

    @property
    def pod(self) -> Pod:
        return self._pod

    @property
    def node_name(self) -> str:
        return self._node_name

    def pending_plugins(self) -> list[str]:
        return ["Gate"]

    def allow(self, plugin: str) -> None:
        pass

    def reject(self, plugin: str, message: str) -> bool:
        self.rejections.append((plugin, message))
        ended, self.ended = self.ended, True
        return not ended

    def preempt(self, plugin: str, message: str) -> bool:
        self.preemptions.append((plugin, message))
        ended, self.ended = self.ended, True
        return not ended


class PreemptionHandle(FakeHandle):
    """Keeps background work until `run_background`; knows pods waiting at Permit."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.background: list[tuple[str, Callable[[], Awaitable[None]]]] = []
        self.waiting: dict[str, WaitingPod] = {}

    def start_background(
        self, name: str, work: Callable[[], Awaitable[None]], *, one_off: bool = False
    ) -> None:
        self.background.append((name, work))

    async def run_background(self) -> None:
        while self.background:
            _, work = self.background.pop(0)
            await work()

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        return self.waiting.get(uid)


class World:
    """Nodes and pods, the filter plugins of a profile and the plugin under test."""

    def __init__(
        self,
        nodes: Iterable[Node],
        pods: Iterable[Pod] = (),
        *,
        pdbs: Sequence[Mapping[str, Any]] = (),
        nominated: Mapping[str, Sequence[Pod]] | None = None,
        args: DefaultPreemptionArgs | None = None,
        seed: int = 0,
        affinity: bool = False,
        extenders: Extenders = NO_EXTENDERS,
    ) -> None:
        """Filters: NodeUnschedulable and NodeResourcesFit, plus InterPodAffinity if asked;
        `extenders` are what the handle offers preemption to ask."""
        self.table = build_table(nodes, pods)
        self.api = API()
        self.handle = PreemptionHandle(
            self.table,
            seed=seed,
            listers={"poddisruptionbudgets": pdbs},
            nominated=nominated,
            api=self.api,
            extenders=extenders,
        )
        fit = NodeResourcesFit(NodeResourcesFitArgs(), self.handle)
        cordon = NodeUnschedulable(None, self.handle)
        pre_filter: list[PreFilterPlugin] = [fit]
        filters: list[FilterPlugin] = [cordon, fit]
        if affinity:
            inter_pod = InterPodAffinity(InterPodAffinityArgs(), self.handle)
            pre_filter.append(inter_pod)
            filters.append(inter_pod)
        self.handle.chain = FilterChain(pre_filter, filters)
        self.plugin = DefaultPreemption(args or DefaultPreemptionArgs(), self.handle)

    def statuses(self, state: CycleState, pod: Pod) -> Statuses:
        """PreFilter into `state`, then Filter every node as the cycle does."""
        for plugin in self.handle.chain.pre_filter:
            _, status = plugin.pre_filter(state, pod, self.table)
            assert status.is_success, status
        return Statuses(
            {
                info.name: self.handle.run_filter_plugins_with_nominated_pods(state, pod, info)
                for info in self.table.node_infos
            }
        )

    def preempt(self, pod: Pod) -> tuple[PostFilterResult | None, Status]:
        state = CycleState()
        return self.plugin.post_filter(state, pod, self.statuses(state, pod))

    def nominated_node(self, pod: Pod) -> str | None:
        """The node preemption nominated `pod` to, or None when it did not succeed."""
        result, status = self.preempt(pod)
        if not status.is_success:
            return None
        assert result is not None
        return result.nominated_node_name


def running(
    name: str,
    node: str,
    *,
    cpu: str,
    priority: int = 0,
    started: str = "",
    labels: Mapping[str, str] | None = None,
) -> Pod:
    """A pod bound to `node`, requesting `cpu`, started at `started` (RFC 3339) if given."""
    raw = (
        make_pod(name)
        .node(node)
        .req(cpu=cpu)
        .priority(priority)
        .phase("Running")
        .labels(**(labels or {}))
        .dict()
    )
    if started:
        raw["status"]["startTime"] = started
    return Pod.from_dict(raw)


def terminating(pod: Pod, *, by_preemption: bool = True) -> Pod:
    """`pod` being deleted; marked as a preemption victim unless told otherwise."""
    raw = copy.deepcopy(dict(pod.raw))
    raw["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    if by_preemption:
        raw["status"]["conditions"] = [
            {
                "type": "DisruptionTarget",
                "status": "True",
                "reason": "PreemptionByScheduler",
                "message": "default-scheduler: preempting to accommodate a higher priority pod",
            }
        ]
    return Pod.from_dict(raw)


def preemptor(name: str = "vip", *, cpu: str = "2", priority: int = 100) -> Pod:
    return make_pod(name).req(cpu=cpu).priority(priority).obj()


def pdb(name: str, *, allowed: int, namespace: str = "default", **match: str) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"selector": {"matchLabels": dict(match)}},
        "status": {"disruptionsAllowed": allowed},
    }
