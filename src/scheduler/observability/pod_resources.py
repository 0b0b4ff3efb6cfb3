"""`/metrics/resources`: what every pod of the cluster requests and limits, as kube-scheduler
serves it.

Capacity dashboards read `kube_pod_resource_request` and `kube_pod_resource_limit` from the
scheduler, because the scheduler's sum is the one that decides placement: sidecars and the
largest init step, pod-level resources and the pod's overhead (`scheduler.objects.resources`).
Two STABLE families, one series per pod and resource, on their own path so that the O(pods)
cardinality stays out of `/metrics`.

The series are computed from the pod informer's store when scraped. Pods the apiserver would
refuse (a quantity that does not parse) are left out and logged at V(4); they cannot reach a
node either. An assigned pod that has finished (Succeeded or Failed) holds nothing and is left
out, as upstream does; an unassigned pod counts whatever its phase.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from typing import Any
from typing import Final

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

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
from scheduler.observability.exposition import render_text
from scheduler.observability.logs import V_DEBUG
from scheduler.observability.logs import log_v

_log = get_logger(__name__)

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


class PodResourceCollector(Collector):
    """The two families for the pods `pods` returns when collected."""

    def __init__(self, pods: PodSource) -> None:
        self._pods = pods

    def collect(self) -> Iterator[GaugeMetricFamily]:
        # Label values in the catalog's order: namespace, node, pod, priority, resource,
        # scheduler, unit.
        requests, limits = _family(POD_RESOURCE_REQUEST), _family(POD_RESOURCE_LIMIT)
        for pod in self._pods():
            spec = pod.get("spec") or {}
            node = spec.get("nodeName") or ""
            if node and (pod.get("status") or {}).get("phase") in _TERMINAL_PHASES:
                continue
            try:
                amounts = pod_requests(spec), pod_limits(spec)
            except InvalidObjectError as exc:
                metadata = pod.get("metadata") or {}
                log_v(
                    _log,
                    V_DEBUG,
                    "Pod left out of the resource metrics",
                    pod=f"{metadata.get('namespace', '')}/{metadata.get('name', '')}",
                    err=str(exc),
                )
                continue
            metadata = pod.get("metadata") or {}
            priority = spec.get("priority")
            pod_labels = (
                metadata.get("namespace", ""),
                node,
                metadata.get("name", ""),
                "" if priority is None else str(priority),
            )
            scheduler = spec.get("schedulerName", "")
            for family, amount in zip((requests, limits), amounts, strict=True):
                for resource, units in amount.items():
                    labels = [*pod_labels, resource, scheduler, resource_unit(resource)]
                    family.add_metric(labels, _value(resource, units))
        yield requests
        yield limits


def _family(spec: MetricSpec) -> GaugeMetricFamily:
    return GaugeMetricFamily(spec.name, spec.help, labels=spec.labels)


def render_pod_resources(pods: PodSource) -> bytes:
    """The `/metrics/resources` body, in the media type of `exposition.CONTENT_TYPE`."""
    return render_text(PodResourceCollector(pods))
