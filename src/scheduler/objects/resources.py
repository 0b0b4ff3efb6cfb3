"""Resource names and the effective requests and limits of a pod, as kube-scheduler computes them.

CPU is kept in millicores and every other resource in whole units (bytes for memory), so all
arithmetic is on ints.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import replace
from functools import lru_cache
from typing import Any

from scheduler.objects.errors import InvalidObjectError
from scheduler.objects.quantity import QuantityError
from scheduler.objects.quantity import int_value
from scheduler.objects.quantity import milli_value

CPU = "cpu"
MEMORY = "memory"
EPHEMERAL_STORAGE = "ephemeral-storage"
PODS = "pods"

# Requests assumed for a container that sets none, used only for scoring and spreading so that
# best-effort pods still count (upstream's DefaultMilliCPURequest / DefaultMemoryRequest).
DEFAULT_MILLI_CPU_REQUEST = 100
DEFAULT_MEMORY_REQUEST = 200 * 1024 * 1024

_HUGEPAGES_PREFIX = "hugepages-"
_NATIVE_PREFIX = "kubernetes.io/"


# The scheduler counts in int64 columns, as upstream does. Upstream's Value and MilliValue
# overflow silently past it (the result is undefined), so a quantity beyond it is refused here.
INT64_MAX = 2**63 - 1


def _unit(resource: str) -> str:
    return "millicores" if resource == CPU else "units"


def _check_fits(resource: str, units: int, what: str) -> int:
    if not -INT64_MAX <= units <= INT64_MAX:
        raise QuantityError(
            f"{what} is {units} {_unit(resource)}, more than an int64 holds ({INT64_MAX})"
        )
    return units


@lru_cache(maxsize=4096)
def _units(resource: str, value: str | int | float) -> int:
    units = milli_value(value) if resource == CPU else int_value(value)
    return _check_fits(resource, units, f"quantity {value!r}")


def quantity_in_units(resource: str, value: str | int | float) -> int:
    """A resource quantity in the scheduler's units: millicores for CPU, whole units otherwise.

    Clusters repeat a handful of quantity strings ("100m", "500Mi") across every pod, so the
    exact (and slow) parse runs once per distinct string.
    """
    return _units(resource, value)


def parse_resource_list(raw: Mapping[str, Any] | None, path: str = "") -> dict[str, int]:
    """Convert an API ResourceList into {name: units}; errors name `path` and the resource."""
    if not raw:
        return {}
    if not isinstance(raw, Mapping):
        raise InvalidObjectError(f"{path or 'resources'}: must be a map of quantities")
    parsed: dict[str, int] = {}
    for name, value in raw.items():
        where = f"{path}.{name}" if path else name
        try:
            parsed[name] = quantity_in_units(name, value)
        except (QuantityError, TypeError) as exc:
            raise InvalidObjectError(f"{where}: {exc}") from exc
        if parsed[name] < 0:
            # The API server refuses negative requests, limits and capacities.
            raise InvalidObjectError(f"{where}: {value!r} must not be negative")
    return parsed


def is_extended_resource(name: str) -> bool:
    """True for resources such as example.com/gpu that are neither native nor hugepages."""
    if name in (CPU, MEMORY, EPHEMERAL_STORAGE, PODS) or name.startswith(_HUGEPAGES_PREFIX):
        return False
    return "/" in name and not name.startswith(_NATIVE_PREFIX)


def is_scalar_resource(name: str) -> bool:
    """Resources other than cpu, memory, ephemeral-storage and pods (extended and hugepages)."""
    return name not in (CPU, MEMORY, EPHEMERAL_STORAGE, PODS)


def _add_into(total: dict[str, int], part: Mapping[str, int]) -> None:
    for name, value in part.items():
        total[name] = total.get(name, 0) + value


def _max_into(total: dict[str, int], part: Mapping[str, int]) -> None:
    for name, value in part.items():
        if value > total.get(name, 0):
            total[name] = value


def _container_amounts(container: Mapping[str, Any], field: str) -> dict[str, int]:
    resources = container.get("resources") or {}
    name = container.get("name", "?")
    return parse_resource_list(resources.get(field), f"container {name!r} resources.{field}")


def is_sidecar(container: Mapping[str, Any]) -> bool:
    """An init container that keeps running beside the others (restartPolicy Always)."""
    return container.get("restartPolicy") == "Always"


@dataclass(frozen=True, slots=True)
class _SpecRequests:
    """A pod spec's requests (or limits) as read once: each container's, and the pod-level
    ones."""

    containers: list[dict[str, int]]
    # (requests, is a sidecar) in the spec's order.
    init_containers: list[tuple[dict[str, int], bool]]
    pod_level: dict[str, int]
    overhead: dict[str, int]


def _read_spec_requests(
    spec: Mapping[str, Any],
    field: str = "requests",
    status: Mapping[str, Any] | None = None,
) -> _SpecRequests:
    read = _SpecRequests(
        containers=[_container_amounts(c, field) for c in spec.get("containers") or ()],
        init_containers=[
            (_container_amounts(c, field), is_sidecar(c)) for c in spec.get("initContainers") or ()
        ],
        pod_level=parse_resource_list(
            (spec.get("resources") or {}).get(field), f"spec.resources.{field}"
        ),
        overhead=parse_resource_list(spec.get("overhead"), "spec.overhead"),
    )
    if status is None or not has_resize_state(status):
        return read
    return _resized(spec, read, status)


def has_resize_state(status: Mapping[str, Any]) -> bool:
    """Whether the kubelet reported resources in the pod's status (a running pod's, or one being
    resized in place), which then count beside the spec."""
    if status.get("resources") is not None:
        return True
    return any(
        isinstance(s, Mapping) and s.get("resources") is not None
        for key in ("containerStatuses", "initContainerStatuses")
        for s in status.get(key) or ()
    )


def _resized(
    spec: Mapping[str, Any], read: _SpecRequests, status: Mapping[str, Any]
) -> _SpecRequests:
    """In-place resize, as kube-scheduler counts a running pod: each container (and sidecar)
    asks for the most of its spec, what the kubelet actuated and what it allocated, so a
    resize down counts only once done and a resize up at once; after an infeasible resize the
    spec no longer counts. Non-restartable init containers have finished: their spec stands.
    The same goes for pod-level requests."""
    infeasible = _resize_infeasible(status)
    by_name = {
        str(s.get("name")): s
        for key in ("containerStatuses", "initContainerStatuses")
        for s in status.get(key) or ()
        if isinstance(s, Mapping)
    }

    def effective(name: Any, requests: dict[str, int]) -> dict[str, int]:
        container_status = by_name.get(str(name))
        if container_status is None or container_status.get("resources") is None:
            return requests
        where = f"status of container {name!r}"
        return _effective_requests_of(
            requests,
            parse_resource_list(
                (container_status.get("resources") or {}).get("requests"),
                f"{where} resources.requests",
            ),
            parse_resource_list(
                container_status.get("allocatedResources"), f"{where} allocatedResources"
            ),
            infeasible,
        )

    containers = [
        effective(c.get("name"), requests)
        for c, requests in zip(spec.get("containers") or (), read.containers, strict=True)
    ]
    init_containers = [
        (effective(c.get("name"), requests) if sidecar else requests, sidecar)
        for c, (requests, sidecar) in zip(
            spec.get("initContainers") or (), read.init_containers, strict=True
        )
    ]
    pod_level = read.pod_level
    pod_status = status.get("resources")
    if pod_level and isinstance(pod_status, Mapping):
        resolved = _effective_requests_of(
            pod_level,
            parse_resource_list(pod_status.get("requests"), "status.resources.requests"),
            parse_resource_list(status.get("allocatedResources"), "status.allocatedResources"),
            infeasible,
        )
        pod_level = {name: resolved.get(name, 0) for name in pod_level}
    return _SpecRequests(containers, init_containers, pod_level, read.overhead)


def _effective_requests_of(
    spec: Mapping[str, int],
    actuated: Mapping[str, int],
    allocated: Mapping[str, int],
    infeasible: bool,
) -> dict[str, int]:
    result: dict[str, int] = {}
    for part in (actuated, allocated) if infeasible else (spec, actuated, allocated):
        _max_into(result, part)
    return result


def _resize_infeasible(status: Mapping[str, Any]) -> bool:
    for condition in status.get("conditions") or ():
        if isinstance(condition, Mapping) and condition.get("type") == "PodResizePending":
            return condition.get("reason") == "Infeasible"
    return False


def pod_requests(spec: Mapping[str, Any], *, pod_level: bool = True) -> dict[str, int]:
    """Effective requests of a pod: regular containers plus sidecars, or the largest init step.

    A non-restartable init container runs alone beside the sidecars started before it, so the
    pod needs the maximum of each such step and of the steady state; pod overhead is added on
    top. Pod-level requests (spec.resources), where set, replace the container sum for the
    resources they name (cpu, memory, hugepages), unless `pod_level` is False.
    """
    return _effective_requests(_read_spec_requests(spec), pod_level)


def pod_limits(spec: Mapping[str, Any]) -> dict[str, int]:
    """Effective limits of a pod, summed as `pod_requests` sums requests (the kubelet's view).

    Pod-level limits replace the container sum for cpu, memory and hugepages. Overhead is added
    only to the resources the pod limits: an unlimited resource stays unlimited.
    """
    read = _read_spec_requests(spec, "limits")
    limits = _container_total(read, pod_level=True)
    for name, value in read.overhead.items():
        if name in limits:
            limits[name] += value
    for name, value in limits.items():
        _check_total(name, value)
    return {name: value for name, value in limits.items() if value}


def _effective_requests(read: _SpecRequests, pod_level: bool) -> dict[str, int]:
    steady = _container_total(read, pod_level)
    _add_into(steady, read.overhead)
    for name, value in steady.items():
        _check_total(name, value)
    return {name: value for name, value in steady.items() if value}


def _container_total(read: _SpecRequests, pod_level: bool) -> dict[str, int]:
    """Regular containers plus sidecars, or the largest init step, before overhead."""
    steady: dict[str, int] = {}
    for requests in read.containers:
        _add_into(steady, requests)
    init_peak: dict[str, int] = {}
    sidecars: dict[str, int] = {}
    for requests, sidecar in read.init_containers:
        if sidecar:
            _add_into(sidecars, requests)
            _max_into(init_peak, sidecars)
        else:
            step = dict(sidecars)
            _add_into(step, requests)
            _max_into(init_peak, step)
    _add_into(steady, sidecars)
    _max_into(steady, init_peak)
    if pod_level:
        for name, value in read.pod_level.items():
            if is_pod_level_resource(name):
                steady[name] = value
    return steady


def is_pod_level_resource(name: str) -> bool:
    """What spec.resources may set for the whole pod: cpu, memory and hugepages."""
    return name in (CPU, MEMORY) or name.startswith(_HUGEPAGES_PREFIX)


def _check_total(resource: str, units: int) -> None:
    try:
        _check_fits(resource, units, f"the pod's {resource} request")
    except QuantityError as exc:
        raise InvalidObjectError(f"spec: {exc}") from exc


# What scoring counts for a container that requests no cpu or memory (upstream's non-zero).
_NON_ZERO_DEFAULTS = ((CPU, DEFAULT_MILLI_CPU_REQUEST), (MEMORY, DEFAULT_MEMORY_REQUEST))


def _with_defaults(requests: dict[str, int], defaults: Mapping[str, int]) -> dict[str, int]:
    """A container's requests with `defaults` for the resources it leaves out (one it sets to
    0 stays 0)."""
    missing = {name: value for name, value in defaults.items() if name not in requests}
    return {**requests, **missing} if missing else requests


def pod_non_zero_requests(spec: Mapping[str, Any], *, pod_level: bool = True) -> tuple[int, int]:
    """CPU (milli) and memory requests with upstream's defaults for containers that set none;
    pod-level requests replace them unless `pod_level` is False."""
    return _non_zero_requests(_read_spec_requests(spec), pod_level)


def _non_zero_requests(read: _SpecRequests, pod_level: bool) -> tuple[int, int]:
    """The pod's requests summed as `_effective_requests` sums them, each container counted
    with the defaults for what it leaves out. With pod-level requests set, a default stands in
    only for a resource nothing in the pod requests, as upstream's scheduler defaults them."""
    pod_level_set = pod_level and any(is_pod_level_resource(name) for name in read.pod_level)
    defaults = dict(_NON_ZERO_DEFAULTS)
    if pod_level_set:
        present = {*_container_total(read, pod_level), *read.overhead}
        defaults = {name: value for name, value in defaults.items() if name not in present}
    if defaults:
        read = replace(
            read,
            containers=[_with_defaults(c, defaults) for c in read.containers],
            init_containers=[(_with_defaults(r, defaults), s) for r, s in read.init_containers],
        )
    total = _container_total(read, pod_level)
    cpu = total.get(CPU, 0) + read.overhead.get(CPU, 0)
    memory = total.get(MEMORY, 0) + read.overhead.get(MEMORY, 0)
    _check_total(CPU, cpu)
    _check_total(MEMORY, memory)
    return cpu, memory


def pod_request_summary(
    spec: Mapping[str, Any], *, pod_level: bool = True, status: Mapping[str, Any] | None = None
) -> tuple[dict[str, int], int, int]:
    """`pod_requests` and `pod_non_zero_requests` together, reading the spec once. With the
    pod's `status`, resources it reports count as kube-scheduler counts them (`_resized`)."""
    read = _read_spec_requests(spec, status=status)
    cpu, memory = _non_zero_requests(read, pod_level)
    return _effective_requests(read, pod_level), cpu, memory
