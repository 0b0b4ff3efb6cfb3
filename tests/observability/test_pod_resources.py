"""`/metrics/resources`: one series per pod and resource, in kube-scheduler's families, units and
labels, computed from the pods when scraped."""

from __future__ import annotations

from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from scheduler.observability.pod_resources import PodResourceMetrics
from scheduler.observability.pod_resources import render_pod_resources
from scheduler.observability.pod_resources import resource_unit

REQUEST = "kube_pod_resource_request"
LIMIT = "kube_pod_resource_limit"


def _pod(
    name: str,
    *,
    node: str = "",
    phase: str | None = None,
    priority: int | None = None,
    requests: dict[str, str] | None = None,
    limits: dict[str, str] | None = None,
) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    if requests:
        resources["requests"] = requests
    if limits:
        resources["limits"] = limits
    spec: dict[str, Any] = {
        "schedulerName": "my-scheduler",
        "containers": [{"name": "main", "resources": resources}],
    }
    if node:
        spec["nodeName"] = node
    if priority is not None:
        spec["priority"] = priority
    pod: dict[str, Any] = {"metadata": {"namespace": "team", "name": name}, "spec": spec}
    if phase is not None:
        pod["status"] = {"phase": phase}
    return pod


def _scrape(pods: list[dict[str, Any]]) -> dict[tuple[str, str, str], tuple[dict[str, str], float]]:
    """(family, pod, resource) -> (labels, value)."""
    text = render_pod_resources(lambda: pods).decode()
    return {
        (sample.name, sample.labels["pod"], sample.labels["resource"]): (
            dict(sample.labels),
            sample.value,
        )
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def test_a_bound_pod_reports_requests_and_limits_with_units_and_labels() -> None:
    pod = _pod(
        "web",
        node="node-1",
        priority=1000,
        requests={"cpu": "250m", "memory": "64Mi", "example.com/gpu": "2"},
        limits={"memory": "128Mi"},
    )
    series = _scrape([pod])
    labels, cores = series[(REQUEST, "web", "cpu")]
    assert cores == 0.25
    assert labels == {
        "namespace": "team",
        "pod": "web",
        "node": "node-1",
        "scheduler": "my-scheduler",
        "priority": "1000",
        "resource": "cpu",
        "unit": "cores",
    }
    assert series[(REQUEST, "web", "memory")][1] == 64 * 1024**2
    assert series[(REQUEST, "web", "memory")][0]["unit"] == "bytes"
    assert series[(REQUEST, "web", "example.com/gpu")] == (
        {**labels, "resource": "example.com/gpu", "unit": ""},
        2.0,
    )
    assert series[(LIMIT, "web", "memory")][1] == 128 * 1024**2
    # Nothing limits the CPU, so there is no limit series for it (upstream drops zeros).
    assert {key for key in series if key[0] == LIMIT} == {(LIMIT, "web", "memory")}


def test_pending_pods_count_with_an_empty_node_and_finished_ones_do_not() -> None:
    pods = [
        _pod("pending", requests={"cpu": "1"}),
        # Upstream only treats an assigned pod as terminal.
        _pod("failed-unassigned", phase="Failed", requests={"cpu": "1"}),
        _pod("done", node="node-1", phase="Succeeded", requests={"cpu": "1"}),
        _pod("crashed", node="node-1", phase="Failed", requests={"cpu": "1"}),
        _pod("running", node="node-1", phase="Running", requests={"cpu": "1"}),
    ]
    series = _scrape(pods)
    assert {pod for _, pod, _ in series} == {"pending", "failed-unassigned", "running"}
    assert series[(REQUEST, "pending", "cpu")][0]["node"] == ""
    assert series[(REQUEST, "pending", "cpu")][0]["priority"] == ""


def test_a_pod_with_a_bad_quantity_is_left_out_and_the_rest_are_reported() -> None:
    pods = [_pod("broken", requests={"cpu": "a lot"}), _pod("fine", requests={"cpu": "2"})]
    assert set(_scrape(pods)) == {(REQUEST, "fine", "cpu")}


def test_the_families_are_stable_gauges_and_left_out_without_series() -> None:
    assert render_pod_resources(list) == b""
    only_requests = render_pod_resources(lambda: [_pod("web", requests={"cpu": "1"})]).decode()
    [family] = text_string_to_metric_families(only_requests)
    assert (family.name, family.type) == (REQUEST, "gauge")
    assert family.documentation.startswith("[STABLE] ")


def test_a_pods_lines_are_kept_until_its_resource_version_changes() -> None:
    pod = _pod("web", requests={"cpu": "1"})
    pod["metadata"]["resourceVersion"] = "7"
    pods = [pod]
    metrics = PodResourceMetrics(lambda: pods)
    first = metrics.render()
    assert metrics.render() == first
    resized = _pod("web", requests={"cpu": "2"})
    resized["metadata"]["resourceVersion"] = "8"
    pods[0] = resized
    assert _values(metrics.render()) == {(REQUEST, "web", "cpu"): 2.0}
    pods.clear()
    assert metrics.render() == b""


def _values(body: bytes) -> dict[tuple[str, str, str], float]:
    return {
        (sample.name, sample.labels["pod"], sample.labels["resource"]): sample.value
        for family in text_string_to_metric_families(body.decode())
        for sample in family.samples
    }


def test_units_follow_upstreams_resource_kinds() -> None:
    assert resource_unit("cpu") == "cores"
    for name in ("memory", "ephemeral-storage", "storage", "hugepages-2Mi"):
        assert resource_unit(name) == "bytes", name
    assert resource_unit("attachable-volumes-aws-ebs") == "integer"
    assert resource_unit("nvidia.com/gpu") == ""
    assert resource_unit("pods") == ""
