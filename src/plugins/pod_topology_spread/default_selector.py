"""The selector default constraints use: the pods of the same Services and controller.

As upstream deduces it: the selectors of every Service in the pod's namespace that selects
the pod, merged; then, if the pod's controller (its ownerReference with `controller: true`) is
a ReplicationController, that controller's selector merged in too, or if it is a ReplicaSet or
StatefulSet, the requirements of that object's label selector added. Objects are read through
the handle's listers; one that is not found contributes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from typing import Final

from scheduler.framework import Handle
from scheduler.framework import Pod
from scheduler.objects.labels import LabelSelector
from scheduler.objects.labels import SelectorError
from scheduler.objects.labels import parse_label_selector
from scheduler.objects.labels import selector_from_set

SERVICES: Final = "services"
REPLICATION_CONTROLLERS: Final = "replicationcontrollers"
REPLICA_SETS: Final = "replicasets"
STATEFUL_SETS: Final = "statefulsets"
WATCHED_RESOURCES: Final = (SERVICES, REPLICATION_CONTROLLERS, REPLICA_SETS, STATEFUL_SETS)

# (group, version, kind) of the controllers whose selectors count.
_REPLICATION_CONTROLLER = ("", "v1", "ReplicationController")
_SELECTOR_OWNERS: Final = {
    ("apps", "v1", "ReplicaSet"): REPLICA_SETS,
    ("apps", "v1", "StatefulSet"): STATEFUL_SETS,
}


def _spec(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    spec = obj.get("spec")
    return spec if isinstance(spec, Mapping) else {}


def _controller_of(pod: Pod) -> Mapping[str, Any] | None:
    meta = pod.raw.get("metadata") or {}
    for owner in meta.get("ownerReferences") or ():
        if owner.get("controller") is True:
            return owner  # type: ignore[no-any-return]
    return None


def _group_version(api_version: str) -> tuple[str, str] | None:
    """("group", "version") of an apiVersion; None if it cannot be parsed."""
    if not api_version:
        return "", ""
    parts = api_version.split("/")
    if len(parts) == 1:
        return "", parts[0]
    if len(parts) == 2:
        return parts[0], parts[1]
    return None


def _service_labels(pod: Pod, handle: Handle) -> dict[str, str]:
    merged: dict[str, str] = {}
    for service in handle.lister(SERVICES).list(pod.namespace):
        selector = _spec(service).get("selector")
        # A Service without a selector selects nothing (not everything).
        if selector is None:
            continue
        pairs = {str(k): str(v) for k, v in selector.items()}
        if selector_from_set(pairs).matches(pod.labels):
            merged.update(pairs)
    return merged


def default_selector(pod: Pod, handle: Handle) -> LabelSelector:
    """The selector deduced for `pod`; an empty one means default constraints do not apply."""
    labels = _service_labels(pod, handle)
    selector = selector_from_set(labels)
    owner = _controller_of(pod)
    if owner is None:
        return selector
    group_version = _group_version(str(owner.get("apiVersion") or ""))
    if group_version is None:
        return selector
    kind = (*group_version, str(owner.get("kind") or ""))
    name = str(owner.get("name") or "")
    if kind == _REPLICATION_CONTROLLER:
        controller = handle.lister(REPLICATION_CONTROLLERS).get(pod.namespace, name)
        if controller is not None:
            controller_labels = _spec(controller).get("selector") or {}
            labels.update({str(k): str(v) for k, v in controller_labels.items()})
            selector = selector_from_set(labels)
        return selector
    resource = _SELECTOR_OWNERS.get(kind)
    if resource is None:
        return selector
    owner_object = handle.lister(resource).get(pod.namespace, name)
    if owner_object is None:
        return selector
    try:
        owner_selector = parse_label_selector(_spec(owner_object).get("selector"))
    except SelectorError:
        return selector
    if owner_selector is None:  # selects nothing: there are no requirements to add
        return selector
    return LabelSelector((*selector.requirements, *owner_selector.requirements))
