"""The scheduler cache: nodes, the pods on them, and pods assumed onto them before binding.

The cache owns every NodeInfo and the columnar NodeTable and keeps the table current as it goes:
a node event rewrites the node's row only when something the row holds changed, and a pod event
rewrites only the usage columns of the one or two rows involved.

Pod life cycle in the cache:
- `assume_pod` places a pod the scheduler has just chosen a node for, so the next cycle already
  sees its requests; the pod stays assumed until the informer reports it bound (`add_pod` or
  `update_pod` with spec.nodeName set), which confirms it, on whichever node it was really
  bound to, or until `forget_pod` undoes the assumption. Assumed pods never expire.
- Pods the informer reports on nodes the cache has not seen (or no longer sees) are kept in a
  NodeInfo without a node; that NodeInfo is not in the table and joins it when the node arrives.
- Terminal pods (Succeeded/Failed) free their node: reporting one removes it from the cache.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from scheduler.backend.cache.errors import CacheError
from scheduler.backend.cache.node_changes import table_fields_differ
from scheduler.framework.node_info import NodeInfo
from scheduler.framework.node_table import NodeTable
from scheduler.objects.node import Node
from scheduler.objects.pod import Pod
from scheduler.objects.pod_changes import copied
from scheduler.objects.pod_changes import same_but_version


class SchedulerCache:
    """Cluster state the scheduling cycle reads; fed by informers and by the scheduler itself."""

    def __init__(self) -> None:
        self._table = NodeTable()
        # By node name; includes NodeInfos without a node that still hold pods.
        self._infos: dict[str, NodeInfo] = {}
        # Every cached pod by key, assumed or confirmed, as placed (spec.nodeName set).
        self._pods: dict[str, Pod] = {}
        # Keys of assumed pods -> whether their binding has finished (informational only,
        # since assumed pods never expire).
        self._assumed: dict[str, bool] = {}

    @property
    def table(self) -> NodeTable:
        return self._table

    # ---- nodes ---------------------------------------------------------------------------

    def add_node(self, node: Node) -> None:
        info = self._infos.get(node.name)
        if info is not None and info.node is not None:
            # A repeated add (e.g. after a relist) is an update of what we hold.
            self.update_node(info.node, node)
            return
        if info is None:
            info = NodeInfo()
            self._infos[node.name] = info
        _set_node(info, node)
        self._table.upsert_node(info)
        self._table.add_images(node.name, node.images)

    def update_node(self, old: Node | None, new: Node) -> None:
        """Apply a node update; `old` is informational, the cached node is what is compared."""
        info = self._infos.get(new.name)
        if info is None or info.node is None:
            self.add_node(new)
            return
        current = info.node
        _set_node(info, new)
        if table_fields_differ(current, new):
            self._table.upsert_node(info)
        # Every update forgets the node's images and records them again, as kube-scheduler's
        # cache does: an image this node alone holds takes the size it reports now.
        self._table.remove_images(new.name, current.images)
        self._table.add_images(new.name, new.images)

    def remove_node(self, node: Node) -> None:
        """Forget the node; pods still bound to it stay cached until they are removed."""
        info = self._infos.get(node.name)
        if info is None or info.node is None:
            return
        self._table.remove_node(node.name)
        self._table.remove_images(node.name, info.node.images)
        info.node = None
        info.generation += 1
        if not info.pods:
            del self._infos[node.name]

    # ---- pods from the informer ----------------------------------------------------------

    def add_pod(self, pod: Pod) -> None:
        """Record a pod the informer reports bound; confirms an assumed pod with the same key.

        A pod already cached is replaced, so a repeated add, a confirmation on another node than
        assumed, or changed requests all end with the pod counted once, where it is bound.
        Unbound pods belong to the scheduling queue and are ignored here.
        """
        if not pod.node_name:
            return
        if pod.is_terminal:
            self._drop(pod.key)
            return
        self._place(pod)
        self._assumed.pop(pod.key, None)

    def update_pod(self, old: Pod, new: Pod) -> None:
        """Apply an update of a pod; the binding of an assumed pod may arrive this way too."""
        if new.node_name:
            self.add_pod(new)
        elif new.key not in self._assumed:
            # Not bound as far as the API knows: it takes no room on any node.
            self._drop(new.key)

    def remove_pod(self, pod: Pod) -> None:
        """Drop a deleted pod wherever the cache holds it.

        An assumed pod deleted before it was bound is left alone: its binding cycle fails and
        forgets it, and forgetting a pod the cache no longer holds would be an error.
        """
        if not pod.node_name and pod.key in self._assumed:
            return
        self._drop(pod.key)

    # ---- pods from the scheduler ---------------------------------------------------------

    def assume_pod(self, pod: Pod, node_name: str) -> Pod:
        """Place `pod` on `node_name` ahead of its binding; returns the placed copy."""
        if pod.key in self._pods:
            raise CacheError(f"pod {pod.key} is in the cache, so can't be assumed")
        assumed = _on_node(pod, node_name)
        self._place(assumed)
        self._assumed[pod.key] = False
        return assumed

    def forget_pod(self, pod: Pod) -> None:
        """Undo `assume_pod`. A pod without spec.nodeName is taken to mean "wherever assumed"."""
        cached = self._pods.get(pod.key)
        if cached is not None and pod.node_name and pod.node_name != cached.node_name:
            raise CacheError(
                f"pod {pod.key} was assumed on {cached.node_name} but assigned to {pod.node_name}"
            )
        if pod.key not in self._assumed:
            raise CacheError(f"pod {pod.key} wasn't assumed so cannot be forgotten")
        self._drop(pod.key)

    def finish_binding(self, pod: Pod) -> None:
        """Note that the binding of an assumed pod is over, whatever its outcome."""
        if pod.key in self._assumed:
            self._assumed[pod.key] = True

    # ---- reading -------------------------------------------------------------------------

    def is_assumed(self, key: str) -> bool:
        return key in self._assumed

    def get_pod(self, key: str) -> Pod | None:
        return self._pods.get(key)

    def node_info(self, name: str) -> NodeInfo | None:
        """The NodeInfo of an existing node (None for a node only its pods speak of)."""
        info = self._infos.get(name)
        return info if info is not None and info.node is not None else None

    def node_infos(self) -> Mapping[str, NodeInfo]:
        """Every NodeInfo by node name, those kept only for the pods of a node the cache has
        not seen (or no longer sees) included; a read-only view."""
        return MappingProxyType(self._infos)

    def node_names(self) -> list[str]:
        """Names of the existing nodes, in table row order."""
        return list(self._table.names)

    def sizes(self) -> dict[str, int]:
        """Counts for scheduler_scheduler_cache_size.

        As upstream counts them: "nodes" includes NodeInfos kept only for their pods, and
        "pods" includes the assumed ones.
        """
        return {
            "nodes": len(self._infos),
            "pods": len(self._pods),
            "assumed_pods": len(self._assumed),
        }

    def dump(self) -> dict[str, Any]:
        """A JSON-ready snapshot for debugging: nodes with their pods, and the assumed pods."""
        nodes: dict[str, Any] = {}
        for name in sorted(self._infos):
            info = self._infos[name]
            nodes[name] = {
                "exists": info.node is not None,
                "generation": info.generation,
                "allocatable": dict(info.node.allocatable) if info.node is not None else {},
                "requested": {r: v for r, v in sorted(info.requested.items()) if v},
                "pods": sorted(info.pods),
            }
        assumed = {
            key: {"node": self._pods[key].node_name, "binding_finished": finished}
            for key, finished in sorted(self._assumed.items())
        }
        return {"nodes": nodes, "assumed_pods": assumed}

    # ---- internals -----------------------------------------------------------------------

    def _place(self, pod: Pod) -> None:
        """Put `pod` at the end of its node's pods, replacing any cached pod with the same
        key."""
        previous = self._pods.get(pod.key)
        if previous is not None and same_but_version(previous, pod):
            # The Binding of an assumed pod coming back, typically: the pod takes the room it
            # took, so the node's totals and its table row stand as they are. It still moves
            # to the end of its node's pods, as upstream's update (remove, then add) moves it.
            self._infos[pod.node_name].replace_pod(pod)
            self._pods[pod.key] = pod
            return
        if previous is not None and previous.node_name != pod.node_name:
            self._take_off_node(previous)
        info = self._infos.get(pod.node_name)
        if info is None:
            info = NodeInfo()
            self._infos[pod.node_name] = info
        info.add_pod(pod)  # replaces a same-key pod on this node
        if info.node is not None:
            self._table.refresh_usage(info)
        self._pods[pod.key] = pod

    def _drop(self, key: str) -> None:
        self._assumed.pop(key, None)
        pod = self._pods.pop(key, None)
        if pod is not None:
            self._take_off_node(pod)

    def _take_off_node(self, pod: Pod) -> None:
        info = self._infos.get(pod.node_name)
        if info is None:
            return
        info.remove_pod(pod.key)
        if info.node is not None:
            self._table.refresh_usage(info)
        elif not info.pods:
            del self._infos[pod.node_name]


def _set_node(info: NodeInfo, node: Node) -> None:
    info.node = node
    info.generation += 1


def _on_node(pod: Pod, node_name: str) -> Pod:
    """A copy of `pod` with spec.nodeName set to `node_name`."""
    return copied(pod, node_name=node_name)
