"""A pod's effective requests: containers, sidecars, init steps, overhead and pod-level
requests, as upstream sums them."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.objects.errors import InvalidObjectError
from scheduler.objects.resources import DEFAULT_MEMORY_REQUEST
from scheduler.objects.resources import DEFAULT_MILLI_CPU_REQUEST
from scheduler.objects.resources import pod_limits
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


def _limited(name: str, *, sidecar: bool = False, **limits: str) -> dict[str, Any]:
    container: dict[str, Any] = {"name": name, "resources": {"limits": dict(limits)}}
    if sidecar:
        container["restartPolicy"] = "Always"
    return container


def test_limits_add_up_as_requests_do() -> None:
    spec = {
        "containers": [_limited("a", cpu="1", memory="1Gi"), _limited("b", cpu="500m")],
        "initContainers": [_limited("s", sidecar=True, cpu="250m"), _limited("i", cpu="3")],
    }
    # Steady state 1 + 0.5 + 0.25 sidecar; the init step runs 3 beside the sidecar: 3.25.
    assert pod_limits(spec) == {"cpu": 3250, "memory": 1024**3}


def test_overhead_is_added_only_to_limited_resources() -> None:
    spec = {
        "containers": [_limited("a", memory="1Gi", cpu="0")],
        "overhead": {"cpu": "50m", "memory": "10Mi", "ephemeral-storage": "1Gi"},
    }
    # cpu is limited (even at zero), so its overhead counts; nothing limits storage.
    assert pod_limits(spec) == {"cpu": 50, "memory": 1024**3 + 10 * 1024**2}


def test_pod_level_limits_replace_the_container_sum() -> None:
    spec = {
        "containers": [_limited("a", cpu="1", memory="1Gi")],
        "resources": {"limits": {"cpu": "4"}},
    }
    assert pod_limits(spec) == {"cpu": 4000, "memory": 1024**3}


def test_a_bad_limit_names_its_container_and_field() -> None:
    spec = {"containers": [_limited("web", cpu="lots")]}
    with pytest.raises(InvalidObjectError, match=r"container 'web' resources\.limits\.cpu"):
        pod_limits(spec)
