"""The ways a pod names its group, and where each kind of PodGroup is read from.

scheduler-plugins labels pods `scheduling.x-k8s.io/pod-group` (briefly
`pod-group.scheduling.x-k8s.io` in v0.25) and serves PodGroups under `scheduling.x-k8s.io`;
before v0.25 the label was `pod-group.scheduling.sigs.k8s.io` and the group
`scheduling.sigs.k8s.io`, which Koordinator still uses. Kubernetes v1.36's own PodGroup
(`scheduling.k8s.io/v1alpha2`) is named by the pod's `spec.schedulingGroup.podGroupName`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from scheduler.objects.raw import DEFAULT_NAMESPACE

# Lister keys (see scheduler.cluster.resource_kinds) of the three PodGroup resources.
X_K8S_RESOURCE = "podgroups"
SIGS_RESOURCE = "podgroups.scheduling.sigs.k8s.io"
NATIVE_RESOURCE = "podgroups.scheduling.k8s.io"
POD_GROUP_RESOURCES = (X_K8S_RESOURCE, SIGS_RESOURCE, NATIVE_RESOURCE)

X_K8S_LABEL = "scheduling.x-k8s.io/pod-group"
X_K8S_SHORT_LIVED_LABEL = "pod-group.scheduling.x-k8s.io"
SIGS_LABEL = "pod-group.scheduling.sigs.k8s.io"

# The API group of each resource, to tell which dialect a PodGroup event is about.
API_GROUPS = {
    X_K8S_RESOURCE: "scheduling.x-k8s.io",
    SIGS_RESOURCE: "scheduling.sigs.k8s.io",
    NATIVE_RESOURCE: "scheduling.k8s.io",
}

# Checked in this order: a pod carrying several links belongs to the first.
_LABELS = (
    (X_K8S_LABEL, X_K8S_RESOURCE),
    (X_K8S_SHORT_LIVED_LABEL, X_K8S_RESOURCE),
    (SIGS_LABEL, SIGS_RESOURCE),
)


@dataclass(frozen=True, slots=True, order=True)
class GroupRef:
    """A PodGroup as its members name it: which resource, which namespace, which name."""

    resource: str
    namespace: str
    name: str

    @property
    def full_name(self) -> str:
        return f"{self.namespace}/{self.name}"

    def __str__(self) -> str:
        return self.full_name


def group_of_raw(raw: Mapping[str, Any]) -> GroupRef | None:
    """The group a pod (as the API returns it) belongs to, or None."""
    meta = raw.get("metadata") or {}
    namespace = str(meta.get("namespace") or DEFAULT_NAMESPACE)
    return _group(namespace, meta.get("labels") or {}, raw.get("spec") or {})


def _group(namespace: str, labels: Mapping[str, str], spec: Mapping[str, Any]) -> GroupRef | None:
    for label, resource in _LABELS:
        name = labels.get(label)
        if name:
            return GroupRef(resource, namespace, name)
    link = spec.get("schedulingGroup")
    if isinstance(link, Mapping):
        name = link.get("podGroupName")
        if name:
            return GroupRef(NATIVE_RESOURCE, namespace, str(name))
    return None


def ref_of_group_object(resource: str, raw: Mapping[str, Any]) -> GroupRef:
    meta = raw.get("metadata") or {}
    return GroupRef(
        resource, str(meta.get("namespace") or DEFAULT_NAMESPACE), str(meta.get("name"))
    )


def resource_of_api_version(api_version: str) -> str | None:
    group = api_version.rpartition("/")[0]
    for resource, api_group in API_GROUPS.items():
        if api_group == group:
            return resource
    return None
