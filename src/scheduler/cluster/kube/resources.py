"""Where each resource lives on the API server: plural name to group, version, kind and scope.

Core resources sit under `/api/v1`, every other group under `/apis/<group>/<version>`;
namespaced resources add `/namespaces/<namespace>` before the plural unless the request spans
all namespaces.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from urllib.parse import quote

from scheduler.framework.errors import NotFoundError

DEFAULT_NAMESPACE = "default"


@dataclass(frozen=True, slots=True)
class ApiResource:
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

    def collection_path(self, namespace: str | None = None) -> str:
        """The list/create/watch path; `None` or "" spans all namespaces. Cluster-scoped
        resources ignore the namespace."""
        root = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            return f"{root}/namespaces/{_segment(namespace)}/{self.resource}"
        return f"{root}/{self.resource}"

    def object_path(self, namespace: str, name: str, subresource: str = "") -> str:
        """The path of one object (and optionally a subresource such as `status`). A namespaced
        resource addressed without a namespace means the `default` namespace, as in kubectl."""
        where = (namespace or DEFAULT_NAMESPACE) if self.namespaced else None
        path = f"{self.collection_path(where)}/{_segment(name)}"
        return f"{path}/{subresource}" if subresource else path


def _segment(value: str) -> str:
    # Names are DNS labels in practice; quoting keeps a malformed one from escaping its segment.
    return quote(value, safe="")


def _resource(plural: str, api_version: str, kind: str, *, namespaced: bool) -> ApiResource:
    group, _, version = api_version.rpartition("/")
    return ApiResource(plural, group, version, kind, namespaced)


BUILTIN_RESOURCES: tuple[ApiResource, ...] = (
    _resource("pods", "v1", "Pod", namespaced=True),
    _resource("nodes", "v1", "Node", namespaced=False),
    _resource("namespaces", "v1", "Namespace", namespaced=False),
    _resource("persistentvolumeclaims", "v1", "PersistentVolumeClaim", namespaced=True),
    _resource("persistentvolumes", "v1", "PersistentVolume", namespaced=False),
    _resource("services", "v1", "Service", namespaced=True),
    _resource("replicationcontrollers", "v1", "ReplicationController", namespaced=True),
    _resource("configmaps", "v1", "ConfigMap", namespaced=True),
    _resource("events", "events.k8s.io/v1", "Event", namespaced=True),
    _resource("leases", "coordination.k8s.io/v1", "Lease", namespaced=True),
    _resource("poddisruptionbudgets", "policy/v1", "PodDisruptionBudget", namespaced=True),
    _resource("priorityclasses", "scheduling.k8s.io/v1", "PriorityClass", namespaced=False),
    _resource("storageclasses", "storage.k8s.io/v1", "StorageClass", namespaced=False),
    _resource("csinodes", "storage.k8s.io/v1", "CSINode", namespaced=False),
    _resource("csidrivers", "storage.k8s.io/v1", "CSIDriver", namespaced=False),
    _resource("csistoragecapacities", "storage.k8s.io/v1", "CSIStorageCapacity", namespaced=True),
    _resource("replicasets", "apps/v1", "ReplicaSet", namespaced=True),
    _resource("statefulsets", "apps/v1", "StatefulSet", namespaced=True),
    _resource("deployments", "apps/v1", "Deployment", namespaced=True),
    _resource("podgroups", "scheduling.x-k8s.io/v1alpha1", "PodGroup", namespaced=True),
    _resource("elasticquotas", "scheduling.x-k8s.io/v1alpha1", "ElasticQuota", namespaced=True),
    _resource("resourceclaims", "resource.k8s.io/v1", "ResourceClaim", namespaced=True),
    _resource("resourceslices", "resource.k8s.io/v1", "ResourceSlice", namespaced=False),
    _resource("deviceclasses", "resource.k8s.io/v1", "DeviceClass", namespaced=False),
)


class ResourceTable:
    """The resources a client can address, by plural name; more can be registered (e.g. a
    custom resource a plugin reads)."""

    def __init__(self, resources: Iterable[ApiResource] = BUILTIN_RESOURCES) -> None:
        self._by_name: dict[str, ApiResource] = {}
        for resource in resources:
            self.register(resource)

    def register(self, resource: ApiResource) -> None:
        self._by_name[resource.resource] = resource

    def __getitem__(self, resource: str) -> ApiResource:
        found = self._by_name.get(resource)
        if found is None:
            # What the API server answers for a resource it does not serve.
            raise NotFoundError(f"the server could not find the requested resource ({resource})")
        return found

    def __contains__(self, resource: object) -> bool:
        return resource in self._by_name

    def names(self) -> list[str]:
        return sorted(self._by_name)
