"""A group's members as the pod informer sees them: how many exist, are gated, are bound."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from plugins.coscheduling.dialects import GroupRef
from plugins.coscheduling.dialects import group_of_raw
from scheduler.framework import Lister

PODS_RESOURCE = "pods"


@dataclass(slots=True)
class Members:
    keys: set[str] = field(default_factory=set)
    gated: int = 0
    bound: dict[str, str] = field(default_factory=dict)  # pod key -> node name
    unbound: list[Mapping[str, Any]] = field(default_factory=list)
    running: int = 0
    pods: dict[str, Mapping[str, Any]] = field(default_factory=dict)  # pod key -> pod

    @property
    def total(self) -> int:
        return len(self.keys)


POD_GROUP_INDEX = "coscheduling/pod-group"


def _index_key(ref: GroupRef) -> str:
    return f"{ref.resource}/{ref.namespace}/{ref.name}"


def _group_key(raw: Mapping[str, Any]) -> str | None:
    ref = group_of_raw(raw)
    return _index_key(ref) if ref is not None else None


def members_of(pods: Lister, ref: GroupRef) -> Members:
    """Every live pod that names the group (terminal pods are not listed), found through an
    index of the pod store by group, so the cost is the group's size, not the cluster's."""
    pods.add_index(POD_GROUP_INDEX, _group_key)
    members = Members()
    for raw in pods.by_index(POD_GROUP_INDEX, _index_key(ref)):
        meta = raw.get("metadata") or {}
        spec = raw.get("spec") or {}
        key = f"{ref.namespace}/{meta.get('name')}"
        members.keys.add(key)
        members.pods[key] = raw
        node = spec.get("nodeName")
        if (raw.get("status") or {}).get("phase") == "Running":
            members.running += 1
        if node:
            members.bound[key] = str(node)
            continue
        members.unbound.append(raw)
        if spec.get("schedulingGates"):
            members.gated += 1
    return members
