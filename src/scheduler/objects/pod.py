"""A pod as the scheduler sees it: parsed once from the API's dict, then read-only."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from scheduler.objects import shapes
from scheduler.objects.errors import read_object
from scheduler.objects.integers import bounded_int
from scheduler.objects.pod_affinity import PodAffinity
from scheduler.objects.pod_affinity import parse_pod_affinity
from scheduler.objects.pod_spec_fields import PodSpecFields
from scheduler.objects.pod_spec_fields import spec_fields
from scheduler.objects.raw import DEFAULT_NAMESPACE
from scheduler.objects.resources import has_resize_state
from scheduler.objects.resources import pod_request_summary
from scheduler.objects.shapes import object_list
from scheduler.objects.shapes import string_map


def _describe(raw: Mapping[str, Any]) -> str:
    meta = raw.get("metadata") if isinstance(raw, Mapping) else None
    if not isinstance(meta, Mapping):
        return "<no metadata>"
    return f"{meta.get('namespace') or DEFAULT_NAMESPACE}/{meta.get('name', '?')}"


@dataclass(frozen=True, slots=True, eq=False)
class Pod(PodSpecFields):
    """Read-only view of a v1.Pod with everything the scheduler derives from it precomputed:
    what its spec alone decides (`PodSpecFields`, whose values the replicas of one spec share)
    and what belongs to this pod."""

    namespace: str
    name: str
    uid: str
    labels: Mapping[str, str]
    annotations: Mapping[str, str]
    node_name: str
    pod_affinity: PodAffinity | None
    pod_anti_affinity: PodAffinity | None
    nominated_node_name: str
    phase: str
    deleting: bool
    generation: int
    resource_version: str
    creation_timestamp: str
    raw: Mapping[str, Any] = field(repr=False)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def has_required_anti_affinity(self) -> bool:
        return self.pod_anti_affinity is not None and bool(self.pod_anti_affinity.required)

    @property
    def has_affinity_terms(self) -> bool:
        return self.pod_affinity is not None or self.pod_anti_affinity is not None

    @property
    def is_terminal(self) -> bool:
        return self.phase in ("Succeeded", "Failed")

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> Pod:
        """Parse a v1.Pod; InvalidObjectError names the pod and the field it cannot read."""
        return read_object("Pod", raw, cls._parse, _describe)

    @classmethod
    def _parse(cls, raw: Mapping[str, Any]) -> Pod:
        meta = raw.get("metadata") or {}
        spec = raw.get("spec") or {}
        status = raw.get("status") or {}
        namespace = str(meta.get("namespace") or DEFAULT_NAMESPACE)
        labels = string_map(meta.get("labels"), "metadata.labels")
        fields = spec_fields(spec)
        shapes.pod_status(raw.get("status"))
        requests, non_zero_cpu, non_zero_memory = (
            fields.requests,
            fields.non_zero_cpu,
            fields.non_zero_memory,
        )
        if has_resize_state(status):
            # What the kubelet reports counts beside the spec (in-place resize), so this pod's
            # requests are its own, not those its spec shares with its replicas.
            requests, non_zero_cpu, non_zero_memory = pod_request_summary(spec, status=status)
        object_list(meta.get("ownerReferences"), "metadata.ownerReferences")
        affinity = spec.get("affinity") or {}
        return cls(
            namespace=namespace,
            name=str(meta.get("name", "")),
            uid=str(meta.get("uid", "")),
            labels=labels,
            annotations=string_map(meta.get("annotations"), "metadata.annotations"),
            scheduler_name=fields.scheduler_name,
            node_name=str(spec.get("nodeName") or ""),
            priority=fields.priority,
            preemption_policy=fields.preemption_policy,
            requests=requests,
            non_zero_cpu=non_zero_cpu,
            non_zero_memory=non_zero_memory,
            host_ports=fields.host_ports,
            tolerations=fields.tolerations,
            node_selector=fields.node_selector,
            node_affinity=fields.node_affinity,
            # The pod's own namespace and labels complete its affinity terms, so these are
            # parsed per pod (an absent section costs nothing).
            pod_affinity=parse_pod_affinity(affinity.get("podAffinity"), namespace, labels),
            pod_anti_affinity=parse_pod_affinity(
                affinity.get("podAntiAffinity"), namespace, labels
            ),
            topology_spread_constraints=fields.topology_spread_constraints,
            scheduling_gates=fields.scheduling_gates,
            images=fields.images,
            nominated_node_name=str(status.get("nominatedNodeName") or ""),
            phase=str(status.get("phase") or "Pending"),
            deleting=bool(meta.get("deletionTimestamp")),
            generation=bounded_int(meta.get("generation") or 0, 64, "metadata.generation"),
            resource_version=str(meta.get("resourceVersion") or ""),
            creation_timestamp=str(meta.get("creationTimestamp") or ""),
            raw=raw,
        )
