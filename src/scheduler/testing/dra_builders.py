"""Builders for dynamic resource allocation objects (resource.k8s.io/v1): DeviceClasses,
ResourceSlices with devices, ResourceClaims and their templates, and pods that use them."""

from __future__ import annotations

from typing import Any
from typing import Self

from scheduler.objects.pod import Pod
from scheduler.objects.raw import DEFAULT_NAMESPACE

API_VERSION = "resource.k8s.io/v1"


def _attribute(value: str | int | bool) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"bool": value}
    if isinstance(value, int):
        return {"int": value}
    if value.startswith("v") and value[1:2].isdigit():
        return {"version": value[1:]}
    return {"string": value}


def device(name: str, capacity: dict[str, str] | None = None, **attributes: Any) -> dict[str, Any]:
    """A device; attributes from Python values ("v1.2.3" strings become versions)."""
    found: dict[str, Any] = {"name": name}
    if attributes:
        found["attributes"] = {k: _attribute(v) for k, v in attributes.items()}
    if capacity:
        found["capacity"] = {k: {"value": v} for k, v in capacity.items()}
    return found


def tainted(found: dict[str, Any], *taints: dict[str, str]) -> dict[str, Any]:
    """`found` (a `device`) with these taints, as a driver sets them in its slice."""
    return {**found, "taints": [dict(t) for t in taints]}


def make_device_taint_rule(
    name: str,
    taint: dict[str, str],
    *,
    driver: str | None = None,
    pool: str | None = None,
    device: str | None = None,
    selector: bool = True,
) -> dict[str, Any]:
    """A DeviceTaintRule (resource.k8s.io/v1beta2) putting `taint` on the devices its selector
    picks: those of `driver`, `pool` and named `device`, each where given; no selector at all
    without `selector`."""
    spec: dict[str, Any] = {"taint": dict(taint)}
    if selector:
        picks = {"driver": driver, "pool": pool, "device": device}
        spec["deviceSelector"] = {k: v for k, v in picks.items() if v is not None}
    return {
        "apiVersion": "resource.k8s.io/v1beta2",
        "kind": "DeviceTaintRule",
        "metadata": {"name": name},
        "spec": spec,
    }


def _resource_slice(name: str, spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": spec,
    }


def consuming(found: dict[str, Any], counter_set: str, **counters: str) -> dict[str, Any]:
    """`found` (a `device`) drawing these amounts from a counter set of its pool."""
    entry = {"counterSet": counter_set, "counters": {k: {"value": v} for k, v in counters.items()}}
    return {**found, "consumesCounters": [*found.get("consumesCounters", ()), entry]}


def make_counter_slice(
    name: str,
    driver: str,
    pool: str,
    counter_sets: dict[str, dict[str, str]],
    *,
    node: str = "",
    generation: int = 1,
    slice_count: int = 2,
) -> dict[str, Any]:
    """A slice holding only a pool's counter sets (the API keeps them apart from devices); by
    default one of the pool's two slices, the other holding the devices."""
    spec: dict[str, Any] = {
        "driver": driver,
        "pool": {"name": pool, "generation": generation, "resourceSliceCount": slice_count},
        "sharedCounters": [
            {"name": set_name, "counters": {k: {"value": v} for k, v in counters.items()}}
            for set_name, counters in counter_sets.items()
        ],
    }
    if node:
        spec["nodeName"] = node
    else:
        spec["allNodes"] = True
    return _resource_slice(name, spec)


def make_device_class(
    name: str, *expressions: str, config: Any = None, extended_resource_name: str = ""
) -> dict[str, Any]:
    spec: dict[str, Any] = {"selectors": [{"cel": {"expression": e}} for e in expressions]}
    if config is not None:
        spec["config"] = [{"opaque": {"driver": name, "parameters": config}}]
    if extended_resource_name:
        spec["extendedResourceName"] = extended_resource_name
    return {
        "apiVersion": API_VERSION,
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": spec,
    }


def make_slice(
    name: str,
    driver: str,
    devices: list[dict[str, Any]],
    *,
    node: str = "",
    all_nodes: bool = False,
    node_selector: dict[str, Any] | None = None,
    pool: str = "",
    generation: int = 1,
    slice_count: int = 1,
    per_device_nodes: bool = False,
) -> dict[str, Any]:
    """A slice of devices; with `per_device_nodes`, each device says where it is available
    (its own nodeName, nodeSelector or allNodes)."""
    spec: dict[str, Any] = {
        "driver": driver,
        "pool": {
            "name": pool or node or name,
            "generation": generation,
            "resourceSliceCount": slice_count,
        },
        "devices": devices,
    }
    if per_device_nodes:
        spec["perDeviceNodeSelection"] = True
    elif node:
        spec["nodeName"] = node
    elif node_selector is not None:
        spec["nodeSelector"] = node_selector
    elif all_nodes:
        spec["allNodes"] = True
    return _resource_slice(name, spec)


class ClaimBuilder:
    def __init__(self, name: str, namespace: str = DEFAULT_NAMESPACE) -> None:
        self._raw: dict[str, Any] = {
            "apiVersion": API_VERSION,
            "kind": "ResourceClaim",
            "metadata": {
                "name": name,
                "namespace": namespace,
                "uid": f"uid-claim-{namespace}-{name}",
                "resourceVersion": "1",
            },
            "spec": {"devices": {"requests": []}},
        }

    @property
    def _devices(self) -> dict[str, Any]:
        devices: dict[str, Any] = self._raw["spec"]["devices"]
        return devices

    def request(
        self,
        name: str,
        device_class: str,
        count: int = 1,
        *,
        all_devices: bool = False,
        selectors: tuple[str, ...] = (),
        admin_access: bool = False,
        tolerations: list[dict[str, str]] | None = None,
    ) -> Self:
        exactly: dict[str, Any] = {"deviceClassName": device_class}
        if all_devices:
            exactly["allocationMode"] = "All"
        else:
            exactly["allocationMode"] = "ExactCount"
            exactly["count"] = count
        if selectors:
            exactly["selectors"] = [{"cel": {"expression": e}} for e in selectors]
        if admin_access:
            exactly["adminAccess"] = True
        if tolerations:
            exactly["tolerations"] = tolerations
        self._devices["requests"].append({"name": name, "exactly": exactly})
        return self

    def first_available(self, name: str, *alternatives: tuple[str, str, int]) -> Self:
        """Alternatives as (subrequest name, device class, count), most preferred first."""
        self._devices["requests"].append(
            {
                "name": name,
                "firstAvailable": [
                    {
                        "name": sub,
                        "deviceClassName": cls,
                        "allocationMode": "ExactCount",
                        "count": n,
                    }
                    for sub, cls, n in alternatives
                ],
            }
        )
        return self

    def match_attribute(self, attribute: str, *requests: str) -> Self:
        constraint: dict[str, Any] = {"matchAttribute": attribute}
        if requests:
            constraint["requests"] = list(requests)
        self._devices.setdefault("constraints", []).append(constraint)
        return self

    def config(self, driver: str, parameters: Any, *requests: str) -> Self:
        entry: dict[str, Any] = {"opaque": {"driver": driver, "parameters": parameters}}
        if requests:
            entry["requests"] = list(requests)
        self._devices.setdefault("config", []).append(entry)
        return self

    def allocated(self, node: str | None, *results: tuple[str, str, str, str]) -> Self:
        """Allocated: results as (request, driver, pool, device); `node` limits it to a node."""
        allocation: dict[str, Any] = {
            "devices": {
                "results": [
                    {"request": r, "driver": d, "pool": p, "device": n} for r, d, p, n in results
                ]
            }
        }
        if node is not None:
            allocation["nodeSelector"] = {
                "nodeSelectorTerms": [
                    {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
                ]
            }
        self._raw.setdefault("status", {})["allocation"] = allocation
        return self

    def admin_access_results(self) -> Self:
        for result in self._raw["status"]["allocation"]["devices"]["results"]:
            result["adminAccess"] = True
        return self

    def reserved_for(self, *pods: Pod) -> Self:
        self._raw.setdefault("status", {})["reservedFor"] = [
            {"resource": "pods", "name": p.name, "uid": p.uid} for p in pods
        ]
        return self

    def owned_by(self, pod: Pod) -> Self:
        self._raw["metadata"]["ownerReferences"] = [
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "name": pod.name,
                "uid": pod.uid,
                "controller": True,
            }
        ]
        return self

    def deleting(self) -> Self:
        self._raw["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
        return self

    def dict(self) -> dict[str, Any]:
        return self._raw


def make_claim(name: str, namespace: str = DEFAULT_NAMESPACE) -> ClaimBuilder:
    return ClaimBuilder(name, namespace)


def make_claim_template(
    name: str, claim: ClaimBuilder, namespace: str = DEFAULT_NAMESPACE
) -> dict[str, Any]:
    return {
        "apiVersion": API_VERSION,
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"spec": claim.dict()["spec"]},
    }


def with_claims(
    pod: dict[str, Any],
    *,
    claims: dict[str, str] | None = None,
    templates: dict[str, str] | None = None,
    generated: dict[str, str | None] | None = None,
) -> dict[str, Any]:
    """Add `spec.resourceClaims` to a pod dict: entry -> claim name, entry -> template name,
    and for templates the names the claim controller recorded in the pod's status."""
    entries: list[dict[str, Any]] = [
        {"name": e, "resourceClaimName": c} for e, c in (claims or {}).items()
    ]
    entries += [{"name": e, "resourceClaimTemplateName": t} for e, t in (templates or {}).items()]
    pod.setdefault("spec", {})["resourceClaims"] = entries
    if generated is not None:
        pod.setdefault("status", {})["resourceClaimStatuses"] = [
            {"name": e, "resourceClaimName": c} if c else {"name": e} for e, c in generated.items()
        ]
    return pod
