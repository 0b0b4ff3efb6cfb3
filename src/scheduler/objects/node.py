"""A node as the scheduler sees it: parsed once from the API's dict, then read-only."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from scheduler.objects.errors import read_object
from scheduler.objects.integers import bounded_int
from scheduler.objects.resources import parse_resource_list
from scheduler.objects.shapes import object_list
from scheduler.objects.shapes import string_map
from scheduler.objects.taints import Taint
from scheduler.objects.taints import parse_taint

ZONE_LABEL = "topology.kubernetes.io/zone"
REGION_LABEL = "topology.kubernetes.io/region"
# The labels zone and region had before they went GA; older nodes and volumes still carry them.
BETA_ZONE_LABEL = "failure-domain.beta.kubernetes.io/zone"
BETA_REGION_LABEL = "failure-domain.beta.kubernetes.io/region"
HOSTNAME_LABEL = "kubernetes.io/hostname"


@dataclass(frozen=True, slots=True)
class ContainerImage:
    names: tuple[str, ...]
    size_bytes: int


@dataclass(frozen=True, slots=True, eq=False)
class Node:
    """Read-only view of a v1.Node."""

    name: str
    uid: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    taints: tuple[Taint, ...]
    unschedulable: bool
    allocatable: Mapping[str, int]
    images: tuple[ContainerImage, ...]
    conditions: tuple[Mapping[str, Any], ...]
    resource_version: str
    raw: Mapping[str, Any] = field(repr=False)
    # status.declaredFeatures: what the kubelet says this node supports (kept sorted by it).
    declared_features: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Node:
        """Parse a v1.Node; InvalidObjectError names the node and the field it cannot read."""
        return read_object("Node", raw, cls._parse, _describe)

    @classmethod
    def _parse(cls, raw: Mapping[str, Any]) -> Node:
        meta = raw.get("metadata") or {}
        spec = raw.get("spec") or {}
        status = raw.get("status") or {}
        allocatable = status.get("allocatable")
        if allocatable is None:
            allocatable = status.get("capacity")
        return cls(
            name=str(meta.get("name", "")),
            uid=str(meta.get("uid", "")),
            labels=string_map(meta.get("labels"), "metadata.labels"),
            annotations=string_map(meta.get("annotations"), "metadata.annotations"),
            taints=tuple(parse_taint(t) for t in spec.get("taints") or ()),
            unschedulable=bool(spec.get("unschedulable")),
            allocatable=parse_resource_list(allocatable, "status.allocatable"),
            images=tuple(
                ContainerImage(_image_names(i.get("names")), _image_size(i.get("sizeBytes")))
                for i in object_list(status.get("images"), "status.images")
            ),
            conditions=object_list(status.get("conditions"), "status.conditions"),
            resource_version=str(meta.get("resourceVersion") or ""),
            raw=raw,
            declared_features=_strings(status.get("declaredFeatures"), "status.declaredFeatures"),
        )


def _describe(raw: Mapping[str, Any]) -> str:
    meta = raw.get("metadata") if isinstance(raw, Mapping) else None
    return str(meta.get("name", "?")) if isinstance(meta, Mapping) else "?"


def _strings(value: Any, path: str) -> tuple[str, ...]:
    items = value or ()
    if not isinstance(items, list | tuple) or not all(isinstance(i, str) for i in items):
        raise ValueError(f"{path}: must be a list of strings")
    return tuple(items)


def _image_names(value: Any) -> tuple[str, ...]:
    names = value or ()
    if not isinstance(names, list | tuple) or not all(isinstance(n, str) for n in names):
        raise ValueError("status.images[].names: must be a list of strings")
    return tuple(names)


def _image_size(value: Any) -> int:
    size = bounded_int(value or 0, 64, "status.images[].sizeBytes")
    if size < 0:
        raise ValueError(f"status.images[].sizeBytes: {size} is negative")
    return size
