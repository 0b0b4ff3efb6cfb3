"""The ResourceClaim the scheduler makes for a pod's extended resources that DeviceClasses
provide (DRAExtendedResource, beta and on in v1.36).

A pod asking for `example.com/gpu: 2` in a container gets, on a node that offers no
`example.com/gpu` through a device plugin, two devices of the class providing the name. They
are allocated as one claim only the scheduler knows until PreBind creates it (named from
`<pod>-extended-resources-`, owned by the pod, marked by an annotation) and records in the pod's
`status.extendedResourceClaimStatus` which request serves which container.

Each container's request becomes one device request, `container-<i>-request-<j>` (i counts init
containers first, j is the resource's place among the container's sorted requests). Init
containers that run before the others (not sidecars) reuse the devices of the containers that
run after them, and ask only for what those lack; of their own requests only the largest is
kept, since they run one at a time.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from typing import Final

from plugins.helpers.extended_resources import DeviceClassResolver
from plugins.helpers.extended_resources import may_be_device_backed
from plugins.helpers.resources.names import is_scalar
from scheduler.framework import Lister
from scheduler.framework import Pod
from scheduler.objects.quantity import QuantityError
from scheduler.objects.quantity import parse_quantity
from scheduler.objects.raw import RawObject
from scheduler.objects.resources import is_sidecar

# Marks the claims the scheduler made for extended resources.
ANNOTATION: Final = "resource.kubernetes.io/extended-resource-claim"
# The claim's name until PreBind creates it; not a valid object name, so never a real one.
IN_MEMORY_NAME: Final = "<extended-resources>"
_OWNER_INDEX: Final = "extendedResourceClaimOwner"


@dataclass(frozen=True, slots=True)
class ExtendedResources:
    """What PreFilter learns of the pod's extended resources a DeviceClass may provide."""

    pod: Pod
    # Each such resource the pod asks for, with its pod-level quantity (never zero).
    requested: tuple[tuple[str, int], ...]
    # resource -> the class providing it, for those a class provides.
    classes: Mapping[str, str]
    # The claim to allocate: in memory, or the one an earlier attempt created.
    claim: RawObject
    # The claim exists already: an earlier attempt created it and did not bind the pod. It is
    # not reused (its allocation may no longer hold); PostFilter deletes it and the pod retries.
    stale: bool

    @property
    def uid(self) -> str:
        return str(self.claim["metadata"].get("uid") or "")

    def left_to_devices(self, allocatable: Mapping[str, int]) -> frozenset[str]:
        """The resources a node offering `allocatable` leaves to devices: those a class
        provides and the node has none of through a device plugin."""
        return frozenset(r for r in self.classes if allocatable.get(r, 0) <= 0)

    @property
    def all_provided(self) -> bool:
        return all(r in self.classes for r, _ in self.requested)

    def unprovided(self, allocatable: Mapping[str, int]) -> bool:
        """Whether the pod asks for a resource the node lacks and no class provides."""
        return any(r not in self.classes and r not in allocatable for r, _ in self.requested)


def _claim_owner(claim: RawObject) -> str | None:
    meta = claim.get("metadata") or {}
    if (meta.get("annotations") or {}).get(ANNOTATION) != "true":
        return None
    for owner in meta.get("ownerReferences") or ():
        if owner.get("controller"):
            return str(owner.get("uid") or "")
    return None


def find_claim(pod: Pod, claims: Lister) -> RawObject | None:
    """The extended resource claim an earlier attempt created for `pod`, if any."""
    claims.add_index(_OWNER_INDEX, _claim_owner)
    for claim in claims.by_index(_OWNER_INDEX, pod.uid):
        meta = claim.get("metadata") or {}
        if str(meta.get("namespace") or "") != pod.namespace:
            continue
        if any(o.get("name") == pod.name for o in meta.get("ownerReferences") or ()):
            return dict(claim)
    return None


def in_memory_claim(pod: Pod, uid: str) -> RawObject:
    """The claim before PreBind creates it, with no requests yet (each node gets its own)."""
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {
            "namespace": pod.namespace,
            "name": IN_MEMORY_NAME,
            # Only for the scheduler's own bookkeeping of the allocation in flight.
            "uid": uid,
            "generateName": f"{pod.name}-extended-resources-",
            "ownerReferences": [
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "name": pod.name,
                    "uid": pod.uid,
                    "controller": True,
                }
            ],
            "annotations": {ANNOTATION: "true"},
        },
        "spec": {},
    }


def extended_resources(
    pod: Pod, resolver: DeviceClassResolver, claims: Lister, new_uid: Callable[[], str]
) -> ExtendedResources | None:
    """None when no DeviceClass provides any of the resources the pod asks for."""
    if not any("/" in name for name in pod.requests):
        return None  # cpu, memory and the like only: the common case, decided at once
    requested = tuple(
        sorted(
            (name, quantity)
            for name, quantity in pod.requests.items()
            if quantity and is_scalar(name) and may_be_device_backed(name)
        )
    )
    classes = resolver.class_names(name for name, _ in requested)
    if not classes:
        return None
    existing = find_claim(pod, claims)
    if existing is not None:
        return ExtendedResources(pod, requested, classes, existing, stale=True)
    claim = in_memory_claim(pod, new_uid())
    return ExtendedResources(pod, requested, classes, claim, stale=False)


def claim_for_node(
    extended: ExtendedResources, resources: frozenset[str]
) -> tuple[RawObject, list[dict[str, str]]]:
    """The claim for a node that leaves `resources` to devices, and the pod's request
    mappings (container, resource, device request) to record once it is created."""
    requests, mappings = device_requests(extended.pod, sorted(resources), extended.classes)
    claim = {**copy.deepcopy(dict(extended.claim)), "spec": {"devices": {"requests": requests}}}
    return claim, mappings


def creation_body(claim: RawObject) -> RawObject:
    """The claim as it is sent to be created: named by the server, without status."""
    body = {key: copy.deepcopy(value) for key, value in claim.items() if key != "status"}
    meta = body["metadata"]
    for key in ("name", "uid", "resourceVersion"):
        meta.pop(key, None)
    return body


# ---- device requests from container requests ------------------------------------------------


def _whole(raw: Any) -> int | None:
    """A quantity as a whole number, or None for a fraction (no device count)."""
    try:
        value = parse_quantity(raw)
    except QuantityError:
        return None
    return int(value) if value == int(value) else None


@dataclass(slots=True)
class _Request:
    name: str
    class_name: str
    count: int

    def body(self) -> dict[str, Any]:
        exactly = {"deviceClassName": self.class_name, "allocationMode": "ExactCount"}
        return {"name": self.name, "exactly": {**exactly, "count": self.count}}


def _container_request(
    index: int,
    container: Mapping[str, Any],
    resource: str,
    class_name: str,
    reusable: Sequence[_Request | None],
) -> tuple[_Request | None, list[dict[str, str]]]:
    """The container's own device request for `resource` (None if it needs none beyond
    `reusable`, the requests of containers running beside it), and its mappings."""
    asked = (container.get("resources") or {}).get("requests") or {}
    wanted = _whole(asked[resource]) if resource in asked else None
    if not wanted:
        return None, []
    name = str(container.get("name") or "")
    mappings: list[dict[str, str]] = []
    covered = 0
    for other in reusable:
        if other is None:
            continue
        covered += other.count
        mappings.append(
            {"containerName": name, "resourceName": resource, "requestName": other.name}
        )
        if covered >= wanted:
            return None, mappings
    position = sorted(asked).index(resource)
    request = _Request(f"container-{index}-request-{position}", class_name, wanted - covered)
    mappings.append({"containerName": name, "resourceName": resource, "requestName": request.name})
    return request, mappings


def device_requests(
    pod: Pod, resources: Sequence[str], classes: Mapping[str, str]
) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    """The claim's device requests for `resources` (sorted by name), and the mappings."""
    spec = pod.raw.get("spec") or {}
    init = list(spec.get("initContainers") or ())
    containers = init + list(spec.get("containers") or ())
    before = [i for i, c in enumerate(containers) if i < len(init) and not is_sidecar(c)]
    beside = [i for i in range(len(containers)) if i not in set(before)]
    requests: list[_Request] = []
    mappings: list[dict[str, str]] = []
    for resource in resources:
        class_name = classes.get(resource)
        if class_name is None:
            continue
        running: list[_Request | None] = [None] * len(containers)
        running_mappings: list[dict[str, str]] = []
        for i in beside:
            request, found = _container_request(i, containers[i], resource, class_name, ())
            running[i] = request
            running_mappings += found
        largest: _Request | None = None
        names: set[str] = set()
        init_mappings: list[dict[str, str]] = []
        for i in before:
            request, found = _container_request(i, containers[i], resource, class_name, running[i:])
            if request is not None:
                names.add(request.name)
                if largest is None or largest.count < request.count:
                    largest = request
            init_mappings += found
        if largest is not None:
            # The init containers run one at a time: the largest request serves them all.
            for mapping in init_mappings:
                if mapping["requestName"] in names:
                    mapping["requestName"] = largest.name
            requests.append(largest)
        requests += [r for r in running if r is not None]
        mappings += running_mappings + init_mappings
    requests.sort(key=lambda r: r.name)
    return [r.body() for r in requests], mappings
