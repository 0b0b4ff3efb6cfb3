"""The API server's rules for the pod writes a scheduler makes: binding and status patches."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scheduler.cluster.sim.merge import merge_status
from scheduler.cluster.sim.merge import set_condition
from scheduler.framework.errors import ConflictError
from scheduler.framework.errors import NotFoundError
from scheduler.objects.pod import Pod


def existing_pod(
    current: dict[str, Any] | None, namespace: str, name: str, uid: str
) -> dict[str, Any]:
    """The stored pod, if it is the one meant: a pod that is gone, or was replaced by another of
    the same name (a different `uid`), is not found."""
    if current is None:
        raise NotFoundError(f'pods "{name}" not found')
    current_uid = current["metadata"].get("uid")
    if uid and current_uid != uid:
        raise NotFoundError(
            f'pods "{name}" not found: {namespace}/{name} now has UID {current_uid}, not {uid}'
        )
    return current


def bound_pod(current: Mapping[str, Any], pod: Pod, node_name: str, now: str) -> dict[str, Any]:
    """The pod after a Binding to `node_name`: nodeName set and PodScheduled=True."""
    if current["metadata"].get("deletionTimestamp"):
        raise ConflictError(f"pod {pod.name} is being deleted, cannot be assigned to a host")
    assigned = current.get("spec", {}).get("nodeName")
    if assigned:
        raise ConflictError(f'pod {pod.name} is already assigned to node "{assigned}"')
    if not node_name:
        raise ConflictError(f"pod {pod.name} cannot be bound to an empty node name")
    status = set_condition(
        current.get("status") or {},
        {"type": "PodScheduled", "status": "True"},
        now,
    )
    return {
        **current,
        "spec": {**current.get("spec", {}), "nodeName": node_name},
        "status": status,
    }


def status_patched(current: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """The pod with `patch` merged into its status. `patch` is the status stanza, or a whole
    `{"status": {...}}` body."""
    inner = patch.get("status")
    stanza = inner if isinstance(inner, Mapping) and len(patch) == 1 else patch
    return {**current, "status": merge_status(current.get("status") or {}, stanza)}
