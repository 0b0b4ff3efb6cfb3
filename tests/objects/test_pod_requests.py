"""A pod's effective requests: containers, sidecars, init steps, overhead and pod-level
requests, as upstream sums them."""

from __future__ import annotations

from typing import Any

from scheduler.objects.resources import DEFAULT_MEMORY_REQUEST
from scheduler.objects.resources import DEFAULT_MILLI_CPU_REQUEST
from scheduler.objects.resources import pod_non_zero_requests
from scheduler.objects.resources import pod_requests


def _container(cpu: str, *, sidecar: bool = False) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "c", "resources": {"requests": {"cpu": cpu}}}
    if sidecar:
        container["restartPolicy"] = "Always"
    return container


def test_containers_add_up() -> None:
    spec = {"containers": [_container("100m"), _container("250m")]}
    assert pod_requests(spec) == {"cpu": 350}


def test_an_init_step_larger_than_the_steady_state_decides() -> None:
    spec = {"containers": [_container("100m")], "initContainers": [_container("1")]}
    assert pod_requests(spec)["cpu"] == 1000


def test_sidecars_run_beside_later_init_steps_and_the_containers() -> None:
    spec = {
        "containers": [_container("100m")],
        "initContainers": [_container("200m", sidecar=True), _container("500m")],
    }
    # Steady state 100m + 200m sidecar; the init step 500m runs beside the sidecar: 700m.
    assert pod_requests(spec)["cpu"] == 700


def test_overhead_is_added_and_pod_level_requests_replace_the_sum() -> None:
    spec = {
        "containers": [_container("100m")],
        "overhead": {"cpu": "50m"},
        "resources": {"requests": {"cpu": "2"}},
    }
    assert pod_requests(spec)["cpu"] == 2050
    assert pod_requests(spec, pod_level=False)["cpu"] == 150


def test_containers_without_requests_count_upstreams_defaults_when_non_zero() -> None:
    spec = {"containers": [{"name": "c"}, _container("300m")]}
    assert pod_requests(spec) == {"cpu": 300}
    cpu, memory = pod_non_zero_requests(spec)
    assert cpu == DEFAULT_MILLI_CPU_REQUEST + 300
    assert memory == 2 * DEFAULT_MEMORY_REQUEST
