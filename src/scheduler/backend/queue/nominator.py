"""Which pending pods are nominated to which node (by preemption, or by their status).

Filter treats a nominated pod of equal or higher priority as already occupying its node, so
the nominator hands out the latest pod object for each nomination.
"""

from __future__ import annotations

from scheduler.objects.pod import Pod


def _identity(pod: Pod) -> str:
    return pod.uid or pod.key


class Nominator:
    __slots__ = ("_by_node", "_node_of")

    def __init__(self) -> None:
        # Per node, nominations in the order they were made.
        self._by_node: dict[str, dict[str, Pod]] = {}
        self._node_of: dict[str, str] = {}

    def __len__(self) -> int:
        return len(self._node_of)

    def add(self, pod: Pod, node_name: str) -> None:
        """Nominate `pod` to `node_name`, replacing any earlier nomination.

        An empty `node_name` only clears the nomination. A pod already bound to a node needs
        no nomination.
        """
        self.delete(pod)
        if not node_name or pod.node_name:
            return
        uid = _identity(pod)
        self._node_of[uid] = node_name
        self._by_node.setdefault(node_name, {})[uid] = pod

    def update(self, old: Pod, new: Pod) -> None:
        """Follow a pod update, keeping an in-memory nomination the API has not caught up with.

        Right after preemption the nomination exists here before the status PATCH lands, so an
        update whose old and new objects both lack status.nominatedNodeName keeps it.
        """
        node_name = new.nominated_node_name
        if not old.nominated_node_name and not new.nominated_node_name:
            node_name = self._node_of.get(_identity(old), "")
        self.delete(old)
        self.add(new, node_name)

    def delete(self, pod: Pod) -> None:
        uid = _identity(pod)
        node_name = self._node_of.pop(uid, None)
        if node_name is None:
            return
        pods = self._by_node.get(node_name)
        if pods is not None:
            pods.pop(uid, None)
            if not pods:
                del self._by_node[node_name]

    def node_of(self, pod: Pod) -> str:
        return self._node_of.get(_identity(pod), "")

    def pods_for_node(self, node_name: str) -> list[Pod]:
        return list(self._by_node.get(node_name, {}).values())

    def by_node(self) -> dict[str, list[Pod]]:
        """Every node that has nominated pods, with them (a copy)."""
        return {node: list(pods.values()) for node, pods in self._by_node.items()}
