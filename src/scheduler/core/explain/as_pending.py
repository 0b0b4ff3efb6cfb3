"""One pod, if bound, shown as still pending to whoever reads the cluster.

`explain` answers for a bound pod too: why it is where it is, and whether it would still go
there. Read through this view (see `ReadOnlyCluster`), every reader (the informers, so the
cache, the queue and every plugin) sees the pod without its node and with a Pending status, and
nothing else changes: its claims and volumes stay as they are, so a claim allocated on its node
keeps the pod there, as it would.
"""

from __future__ import annotations

from typing import Any

PODS = "pods"


class UnboundPod:
    """A `ReadOnlyCluster` view unbinding pod `namespace`/`name`; `bound_to` is the node it
    was read on ("" while it has been read pending)."""

    def __init__(self, namespace: str, name: str) -> None:
        self._key = (namespace, name)
        self.bound_to = ""

    def __call__(self, resource: str, obj: dict[str, Any]) -> dict[str, Any]:
        meta = obj.get("metadata") or {}
        spec = obj.get("spec") or {}
        if resource != PODS or (meta.get("namespace"), meta.get("name")) != self._key:
            return obj
        if not spec.get("nodeName"):
            return obj
        self.bound_to = str(spec["nodeName"])
        unbound = {key: value for key, value in spec.items() if key != "nodeName"}
        # A fresh Pending status: what the kubelet reported is not the scheduler's to read.
        return {**obj, "spec": unbound, "status": {"phase": "Pending"}}
