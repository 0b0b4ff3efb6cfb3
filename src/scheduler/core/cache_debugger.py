"""What `kill -USR2` does to kube-scheduler, done here: check the cache against the informers,
then write the cache and the queue to the log.

An operator who suspects the scheduler sees the cluster wrongly (a node it thinks is full, a
pod it never tries) sends SIGUSR2 and reads, with upstream's messages and keys so that the same
log queries find them:

- "Cache mismatch" with `missedNodes`/`redundantNodes`, then with `missedPods`/`redundantPods`
  (only when something differs): node names and pod UIDs the informers hold that the cache and
  queue lack (missed), and the reverse (redundant);
- "Dump of cached NodeInfo": each node's requested and allocatable resources, its pods and the
  pods nominated to it, as upstream's text;
- "Dump of scheduling queue": the queue's sizes and the pods waiting in it.

The comparison leaves out two kinds of pod that upstream's reports as missed although nothing
is wrong: pending pods that name another scheduler (no cache or queue of ours ever holds them),
and pods popped for a scheduling attempt that are not yet assumed (between queue and cache).
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from typing import Protocol

from scheduler.backend.cache.cache import SchedulerCache
from scheduler.backend.queue.scheduling_queue import SchedulingQueue
from scheduler.framework.node_info import NodeInfo
from scheduler.objects.pod import Pod
from scheduler.objects.raw import RawObject
from scheduler.objects.raw import metadata_of
from scheduler.objects.raw import spec_of
from scheduler.objects.resources import CPU
from scheduler.objects.resources import EPHEMERAL_STORAGE
from scheduler.objects.resources import MEMORY
from scheduler.objects.resources import PODS
from scheduler.objects.resources import is_scalar_resource
from scheduler.observability import get_logger
from scheduler.observability import log_v

_log = get_logger("scheduler.cache_debugger")

# klog level of the comparer's start and end lines, as upstream logs them.
V_COMPARER = 3


class ObjectLister(Protocol):
    """What the comparer reads of an informer: its objects as the API server sent them."""

    def list(self, namespace: str | None = None) -> list[dict[str, Any]]: ...


@dataclass(frozen=True, slots=True)
class Mismatch:
    """Keys the informers hold that the scheduler lacks (missed), and the reverse (redundant),
    each sorted."""

    missed: list[str]
    redundant: list[str]

    def __bool__(self) -> bool:
        return bool(self.missed or self.redundant)


def compare_keys(actual: Iterable[str], cached: Iterable[str]) -> Mismatch:
    actual_set, cached_set = set(actual), set(cached)
    return Mismatch(sorted(actual_set - cached_set), sorted(cached_set - actual_set))


def pod_line(pod: Pod) -> str:
    """One pod as upstream's dump writes it."""
    return (
        f"name: {pod.name}, namespace: {pod.namespace}, uid: {pod.uid}, "
        f"phase: {pod.phase}, nominated node: {pod.nominated_node_name}\n"
    )


def resource_text(resources: Mapping[str, int], *, pods_allowed: int = 0) -> str:
    """Resources as Go prints upstream's `*Resource` with `%+v` (CPU in millicores, the rest in
    units; maps print with their keys sorted)."""
    scalars = " ".join(
        f"{name}:{resources[name]}" for name in sorted(resources) if is_scalar_resource(name)
    )
    return (
        f"&{{MilliCPU:{resources.get(CPU, 0)} Memory:{resources.get(MEMORY, 0)} "
        f"EphemeralStorage:{resources.get(EPHEMERAL_STORAGE, 0)} "
        f"AllowedPodNumber:{pods_allowed} ScalarResources:map[{scalars}]}}"
    )


def node_text(name: str, info: NodeInfo, nominated: Sequence[Pod]) -> str:
    """One node of the dump, in upstream's words and layout."""
    # Upstream counts what its pods request; the pods themselves are counted by the list.
    requested = {resource: value for resource, value in info.requested.items() if resource != PODS}
    parts = [
        f"Node name: {name}\nDeleted: {str(info.node is None).lower()}\n"
        f"Requested Resources: {resource_text(requested)}\n"
        f"Allocatable Resources:{resource_text(info.allocatable, pods_allowed=info.allowed_pods)}\n"
        f"Scheduled Pods(number: {len(info.pods)}):\n",
        *(pod_line(pod) for pod in info.pods.values()),
    ]
    if nominated:
        parts.append(f"Nominated Pods(number: {len(nominated)}):\n")
        parts.extend(pod_line(pod) for pod in nominated)
    return "".join(parts)


class CacheDebugger:
    """Compares and dumps one scheduler's cache and queue; `run` is what SIGUSR2 calls."""

    def __init__(
        self,
        *,
        cache: SchedulerCache,
        queue: SchedulingQueue,
        nodes: ObjectLister,
        pods: ObjectLister,
        scheduler_names: Iterable[str],
    ) -> None:
        self._cache = cache
        self._queue = queue
        self._nodes = nodes
        self._pods = pods
        self._scheduler_names = frozenset(scheduler_names)

    def run(self) -> None:
        self.compare()
        self.dump()

    def compare(self) -> tuple[Mismatch, Mismatch]:
        """Log (and return) how the cache and queue differ from the informers, nodes then
        pods."""
        log_v(_log, V_COMPARER, "Cache comparer started")
        infos = self._cache.node_infos()
        names = (str(metadata_of(node).get("name", "")) for node in self._nodes.list())
        nodes = compare_keys(names, infos)
        if nodes:
            _log.info("Cache mismatch", missedNodes=nodes.missed, redundantNodes=nodes.redundant)
        held = [pod.uid for info in infos.values() for pod in info.pods.values()]
        held.extend(info.pod.uid for info in self._queue.pending_pods())
        held.extend(pod.uid for pod in self._queue.in_flight_pods())
        uids = (
            str(metadata_of(pod).get("uid", "")) for pod in self._pods.list() if self._ours(pod)
        )
        pods = compare_keys(uids, held)
        if pods:
            _log.info("Cache mismatch", missedPods=pods.missed, redundantPods=pods.redundant)
        log_v(_log, V_COMPARER, "Cache comparer finished")
        return nodes, pods

    def dump(self) -> None:
        """Log every cached node with its pods and nominations, then the queue."""
        infos = self._cache.node_infos()
        nodes = [
            node_text(name, infos[name], self._queue.nominated_pods_for_node(name))
            for name in sorted(infos)
        ]
        _log.info("Dump of cached NodeInfo", nodes="\n\n".join(nodes))
        pending = "".join(pod_line(info.pod) for info in self._queue.pending_pods())
        _log.info("Dump of scheduling queue", summary=self._queue.summary(), pods=pending)

    def _ours(self, pod: RawObject) -> bool:
        """Whether the cache or queue should hold `pod`: bound, or naming one of our
        profiles."""
        spec = spec_of(pod)
        return bool(spec.get("nodeName")) or spec.get("schedulerName") in self._scheduler_names
