"""`/metrics/resources`: what every pod of the cluster requests and limits, as kube-scheduler
serves it.

Capacity dashboards read `kube_pod_resource_request` and `kube_pod_resource_limit` from the
scheduler, because the scheduler's sum is the one that decides placement: sidecars and the
largest init step, pod-level resources and the pod's overhead (`scheduler.objects.resources`).
Two STABLE families, one series per pod and resource, on their own path so that the O(pods)
cardinality stays out of `/metrics`.

The series are computed from the pod informer's store when scraped. Pods the apiserver would
refuse (a quantity that does not parse) are left out and logged at V(4), once per version of
the pod; they cannot reach a node either. An assigned pod that has finished (Succeeded or
Failed) holds nothing and is left out, as upstream does; an unassigned pod counts whatever its
phase.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from typing import Any
from typing import Final
from typing import cast

from prometheus_client import utils as prometheus_utils

from scheduler.framework.log import get_logger
from scheduler.objects.errors import InvalidObjectError
from scheduler.objects.resources import CPU
from scheduler.objects.resources import EPHEMERAL_STORAGE
from scheduler.objects.resources import MEMORY
from scheduler.objects.resources import pod_limits
from scheduler.objects.resources import pod_requests
from scheduler.observability.catalog import POD_RESOURCE_LIMIT
from scheduler.observability.catalog import POD_RESOURCE_REQUEST
from scheduler.observability.catalog import MetricSpec
from scheduler.observability.logs import V_DEBUG
from scheduler.observability.logs import log_v

_log = get_logger(__name__)

# Go's shortest float formatting, as every other family is written (prometheus_client's own
# helper, which carries no annotations).
_go_float = cast(Callable[[float], str], prometheus_utils.floatToGoString)

_BYTES: Final = frozenset({MEMORY, EPHEMERAL_STORAGE, "storage"})
_TERMINAL_PHASES: Final = frozenset({"Succeeded", "Failed"})

PodSource = Callable[[], Iterable[Mapping[str, Any]]]
"""The pods to report, read on every scrape (the pod informer's store)."""


def resource_unit(resource: str) -> str:
    """The `unit` label upstream gives a resource: "" for extended resources it cannot know."""
    if resource == CPU:
        return "cores"
    if resource in _BYTES or resource.startswith("hugepages-"):
        return "bytes"
    if resource.startswith("attachable-volumes-"):
        return "integer"
    return ""


def _value(resource: str, units: int) -> float:
    # The scheduler keeps CPU in millicores; the family reports cores.
    return units / 1000 if resource == CPU else float(units)


_PodLines = tuple[tuple[str, ...], tuple[str, ...]]
"""A pod's sample lines: (requests, limits)."""

_NO_LINES: Final[_PodLines] = ((), ())


class PodResourceMetrics:
    """Renders the two families for the pods `pods` returns, on every call.

    Ten thousand pods make twenty thousand series or more, and the scrape runs on the
    scheduler's event loop, so the lines are written directly rather than through
    prometheus_client's objects (a third of the time), and each pod's lines are kept until its
    resourceVersion changes: a scrape of an unchanged cluster only joins them.
    """

    def __init__(self, pods: PodSource) -> None:
        self._pods = pods
        self._kept: dict[tuple[str, str], tuple[str, _PodLines]] = {}

    def render(self) -> bytes:
        """The `/metrics/resources` body (media type `exposition.CONTENT_TYPE`); empty when no
        pod has a series, as the Go client leaves out families without samples."""
        requests: list[str] = []
        limits: list[str] = []
        kept: dict[tuple[str, str], tuple[str, _PodLines]] = {}
        for pod in self._pods():
            metadata = pod.get("metadata") or {}
            key = (metadata.get("namespace", ""), metadata.get("name", ""))
            version = str(metadata.get("resourceVersion") or "")
            hit = self._kept.get(key)
            lines = hit[1] if hit is not None and version and hit[0] == version else _lines(pod)
            if version:
                kept[key] = (version, lines)
            requests.extend(lines[0])
            limits.extend(lines[1])
        self._kept = kept
        return "".join(
            [
                *_family_text(POD_RESOURCE_REQUEST, requests),
                *_family_text(POD_RESOURCE_LIMIT, limits),
            ]
        ).encode()


def _lines(pod: Mapping[str, Any]) -> _PodLines:
    metadata, spec = pod.get("metadata") or {}, pod.get("spec") or {}
    node = spec.get("nodeName") or ""
    if node and (pod.get("status") or {}).get("phase") in _TERMINAL_PHASES:
        return _NO_LINES
    try:
        amounts = pod_requests(spec), pod_limits(spec)
    except InvalidObjectError as exc:
        log_v(
            _log,
            V_DEBUG,
            "Pod left out of the resource metrics",
            pod=f"{metadata.get('namespace', '')}/{metadata.get('name', '')}",
            err=str(exc),
        )
        return _NO_LINES
    priority = spec.get("priority")
    # In the catalog's label order (sorted by name, as the Go client writes them).
    head = (
        f'{{namespace="{_escape(metadata.get("namespace", ""))}",node="{_escape(node)}",'
        f'pod="{_escape(metadata.get("name", ""))}",'
        f'priority="{"" if priority is None else _escape(str(priority))}",resource="'
    )
    tail = f'",scheduler="{_escape(spec.get("schedulerName", ""))}",unit="'
    return (
        _samples(POD_RESOURCE_REQUEST.name, head, tail, amounts[0]),
        _samples(POD_RESOURCE_LIMIT.name, head, tail, amounts[1]),
    )


def _samples(family: str, head: str, tail: str, amount: Mapping[str, int]) -> tuple[str, ...]:
    return tuple(
        f'{family}{head}{_escape(resource)}{tail}{resource_unit(resource)}"}} '
        f"{_go_float(_value(resource, units))}\n"
        for resource, units in amount.items()
    )


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _family_text(spec: MetricSpec, lines: list[str]) -> list[str]:
    if not lines:
        return []
    help_text = spec.help.replace("\\", "\\\\").replace("\n", "\\n")
    return [f"# HELP {spec.name} {help_text}\n# TYPE {spec.name} gauge\n", *lines]


def render_pod_resources(pods: PodSource) -> bytes:
    """One rendering of `/metrics/resources`, keeping nothing."""
    return PodResourceMetrics(pods).render()
