"""The resources the in-memory cluster serves: plural name, API group/version, kind, scope."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from scheduler.framework.errors import NotFoundError


@dataclass(frozen=True, slots=True)
class ResourceKind:
    resource: str
    group: str
    version: str
    kind: str
    namespaced: bool

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def qualified_name(self) -> str:
        """How the API server names the resource in messages, e.g. `leases.coordination.k8s.io`."""
        return f"{self.resource}.{self.group}" if self.group else self.resource


def _kind(resource: str, api_version: str, kind: str, *, namespaced: bool) -> ResourceKind:
    group, _, version = api_version.rpartition("/")
    return ResourceKind(resource, group, version, kind, namespaced)


BUILTIN_KINDS: tuple[ResourceKind, ...] = (
    _kind("pods", "v1", "Pod", namespaced=True),
    _kind("nodes", "v1", "Node", namespaced=False),
    _kind("namespaces", "v1", "Namespace", namespaced=False),
    _kind("persistentvolumeclaims", "v1", "PersistentVolumeClaim", namespaced=True),
    _kind("persistentvolumes", "v1", "PersistentVolume", namespaced=False),
    _kind("services", "v1", "Service", namespaced=True),
    _kind("replicationcontrollers", "v1", "ReplicationController", namespaced=True),
    _kind("configmaps", "v1", "ConfigMap", namespaced=True),
    _kind("replicasets", "apps/v1", "ReplicaSet", namespaced=True),
    _kind("statefulsets", "apps/v1", "StatefulSet", namespaced=True),
    _kind("deployments", "apps/v1", "Deployment", namespaced=True),
    _kind("poddisruptionbudgets", "policy/v1", "PodDisruptionBudget", namespaced=True),
    _kind("priorityclasses", "scheduling.k8s.io/v1", "PriorityClass", namespaced=False),
    _kind("storageclasses", "storage.k8s.io/v1", "StorageClass", namespaced=False),
    _kind("csinodes", "storage.k8s.io/v1", "CSINode", namespaced=False),
    _kind("csidrivers", "storage.k8s.io/v1", "CSIDriver", namespaced=False),
    _kind("csistoragecapacities", "storage.k8s.io/v1", "CSIStorageCapacity", namespaced=True),
    _kind("leases", "coordination.k8s.io/v1", "Lease", namespaced=True),
    _kind("events", "events.k8s.io/v1", "Event", namespaced=True),
    _kind("podgroups", "scheduling.x-k8s.io/v1alpha1", "PodGroup", namespaced=True),
    _kind("elasticquotas", "scheduling.x-k8s.io/v1alpha1", "ElasticQuota", namespaced=True),
    _kind("resourceclaims", "resource.k8s.io/v1", "ResourceClaim", namespaced=True),
    _kind("resourceslices", "resource.k8s.io/v1", "ResourceSlice", namespaced=False),
    _kind("deviceclasses", "resource.k8s.io/v1", "DeviceClass", namespaced=False),
)


class KindRegistry:
    """Looks kinds up by resource name (API calls) and by apiVersion+kind (loaded manifests)."""

    def __init__(self, kinds: Iterable[ResourceKind] = BUILTIN_KINDS) -> None:
        self._by_resource: dict[str, ResourceKind] = {}
        self._by_group_kind: dict[tuple[str, str], ResourceKind] = {}
        for kind in kinds:
            self.register(kind)

    def register(self, kind: ResourceKind) -> None:
        self._by_resource[kind.resource] = kind
        self._by_group_kind[(kind.group, kind.kind)] = kind

    def for_resource(self, resource: str) -> ResourceKind:
        kind = self._by_resource.get(resource)
        if kind is None:
            raise NotFoundError(f"the server could not find the requested resource ({resource})")
        return kind

    def for_object(self, obj: Mapping[str, Any]) -> ResourceKind:
        """The kind of a manifest. Any version of a known group matches (a manifest written for
        policy/v1beta1 still loads as a PodDisruptionBudget)."""
        api_version = str(obj.get("apiVersion") or "")
        kind_name = str(obj.get("kind") or "")
        group = api_version.rpartition("/")[0]
        kind = self._by_group_kind.get((group, kind_name))
        if kind is None:
            meta = obj.get("metadata") or {}
            where = "/".join(p for p in (meta.get("namespace"), meta.get("name")) if p)
            raise ValueError(
                f"cannot load {kind_name or '<no kind>'} {where or '<unnamed>'}"
                f" (apiVersion {api_version or '<none>'}): unknown kind; known kinds are "
                + ", ".join(
                    sorted({f"{k.api_version} {k.kind}" for k in self._by_resource.values()})
                )
            )
        return kind
