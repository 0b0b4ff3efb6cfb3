"""The API resources the scheduler works with: plural name, group, version, kind and scope.

One table for both adapters: the in-memory cluster serves exactly these, and the real-cluster
client knows where each lives on an API server. Core resources sit under `/api/v1`, every other
group under `/apis/<group>/<version>`; namespaced resources add `/namespaces/<namespace>`
before the plural unless the request spans all namespaces.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from scheduler.objects.raw import DEFAULT_NAMESPACE


@dataclass(frozen=True, slots=True)
class ResourceKind:
    resource: str
    group: str
    version: str
    kind: str
    namespaced: bool
    # The plural in URL paths when `resource` (the key everything else uses) has to differ from
    # it, because two API groups serve the same plural (PodGroups, for instance).
    plural: str = ""

    @property
    def path_plural(self) -> str:
        return self.plural or self.resource

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def qualified_name(self) -> str:
        """How the API server names the resource in messages, e.g. `leases.coordination.k8s.io`."""
        return f"{self.path_plural}.{self.group}" if self.group else self.path_plural

    def collection_path(self, namespace: str | None = None) -> str:
        """The list/create/watch path; `None` or "" spans all namespaces. Cluster-scoped
        resources ignore the namespace."""
        root = f"/apis/{self.group}/{self.version}" if self.group else f"/api/{self.version}"
        if self.namespaced and namespace:
            return f"{root}/namespaces/{_segment(namespace)}/{self.path_plural}"
        return f"{root}/{self.path_plural}"

    def object_path(self, namespace: str, name: str, subresource: str = "") -> str:
        """The path of one object (and optionally a subresource such as `status`). A namespaced
        resource addressed without a namespace means the `default` namespace, as in kubectl."""
        where = (namespace or DEFAULT_NAMESPACE) if self.namespaced else None
        path = f"{self.collection_path(where)}/{_segment(name)}"
        return f"{path}/{subresource}" if subresource else path


def _segment(value: str) -> str:
    # Names are DNS labels in practice; quoting keeps a malformed one from escaping its segment.
    return quote(value, safe="")


def kind(
    resource: str, api_version: str, kind_name: str, *, namespaced: bool, plural: str = ""
) -> ResourceKind:
    group, _, version = api_version.rpartition("/")
    return ResourceKind(resource, group, version, kind_name, namespaced, plural)


BUILTIN_KINDS: tuple[ResourceKind, ...] = (
    kind("pods", "v1", "Pod", namespaced=True),
    kind("nodes", "v1", "Node", namespaced=False),
    kind("namespaces", "v1", "Namespace", namespaced=False),
    kind("persistentvolumeclaims", "v1", "PersistentVolumeClaim", namespaced=True),
    kind("persistentvolumes", "v1", "PersistentVolume", namespaced=False),
    kind("services", "v1", "Service", namespaced=True),
    kind("replicationcontrollers", "v1", "ReplicationController", namespaced=True),
    kind("configmaps", "v1", "ConfigMap", namespaced=True),
    kind("replicasets", "apps/v1", "ReplicaSet", namespaced=True),
    kind("statefulsets", "apps/v1", "StatefulSet", namespaced=True),
    kind("deployments", "apps/v1", "Deployment", namespaced=True),
    kind("poddisruptionbudgets", "policy/v1", "PodDisruptionBudget", namespaced=True),
    kind("priorityclasses", "scheduling.k8s.io/v1", "PriorityClass", namespaced=False),
    kind("storageclasses", "storage.k8s.io/v1", "StorageClass", namespaced=False),
    kind("csinodes", "storage.k8s.io/v1", "CSINode", namespaced=False),
    kind("csidrivers", "storage.k8s.io/v1", "CSIDriver", namespaced=False),
    kind("csistoragecapacities", "storage.k8s.io/v1", "CSIStorageCapacity", namespaced=True),
    kind("volumeattachments", "storage.k8s.io/v1", "VolumeAttachment", namespaced=False),
    kind("leases", "coordination.k8s.io/v1", "Lease", namespaced=True),
    kind("events", "events.k8s.io/v1", "Event", namespaced=True),
    kind("podgroups", "scheduling.x-k8s.io/v1alpha1", "PodGroup", namespaced=True),
    kind("elasticquotas", "scheduling.x-k8s.io/v1alpha1", "ElasticQuota", namespaced=True),
    # The same PodGroup under the API group scheduler-plugins used before v0.25 (Koordinator
    # still serves it), and upstream's own gang-scheduling PodGroup (alpha in v1.36).
    kind(
        "podgroups.scheduling.sigs.k8s.io",
        "scheduling.sigs.k8s.io/v1alpha1",
        "PodGroup",
        namespaced=True,
        plural="podgroups",
    ),
    kind(
        "podgroups.scheduling.k8s.io",
        "scheduling.k8s.io/v1alpha2",
        "PodGroup",
        namespaced=True,
        plural="podgroups",
    ),
    kind("resourceclaims", "resource.k8s.io/v1", "ResourceClaim", namespaced=True),
    kind("resourceclaimtemplates", "resource.k8s.io/v1", "ResourceClaimTemplate", namespaced=True),
    kind("resourceslices", "resource.k8s.io/v1", "ResourceSlice", namespaced=False),
    kind("deviceclasses", "resource.k8s.io/v1", "DeviceClass", namespaced=False),
    # Served only by an API server with resource.k8s.io/v1beta2 and DRADeviceTaintRules on.
    kind("devicetaintrules", "resource.k8s.io/v1beta2", "DeviceTaintRule", namespaced=False),
    # IPAllocation's address pools (deploy/crds/ippools.yaml).
    kind("ippools", "kube-pyscheduler.io/v1alpha1", "IPPool", namespaced=False),
)
