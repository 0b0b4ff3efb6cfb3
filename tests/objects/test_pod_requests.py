"""A pod's effective requests: containers, sidecars, init steps, overhead, pod-level requests
and in-place resizes, as upstream sums them."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.objects.errors import InvalidObjectError
from scheduler.objects.pod import Pod
from scheduler.objects.resources import DEFAULT_MEMORY_REQUEST
from scheduler.objects.resources import DEFAULT_MILLI_CPU_REQUEST
from scheduler.objects.resources import pod_limits
from scheduler.objects.resources import pod_non_zero_requests
from scheduler.objects.resources import pod_requests
from scheduler.testing import make_pod


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


def test_an_init_step_counts_its_defaults_beside_the_sidecars_started_before_it() -> None:
    sidecar = {
        "name": "proxy",
        "restartPolicy": "Always",
        "resources": {"requests": {"cpu": "500m", "memory": "100Mi"}},
    }
    init = {"name": "setup", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}
    main = {"name": "app", "resources": {"requests": {"cpu": "100m", "memory": "50Mi"}}}
    spec = {"containers": [main], "initContainers": [sidecar, init]}
    # The init step runs beside the proxy: 1.5 CPU and 1124Mi, more than the steady state.
    assert pod_non_zero_requests(spec) == (1500, 1124 * 1024**2)


def test_with_pod_level_requests_a_default_stands_in_only_for_what_nothing_requests() -> None:
    spec = {
        "resources": {"requests": {"memory": "1Gi"}},
        "containers": [_container("500m"), {"name": "idle"}],
    }
    # cpu is requested by one container, so the idle one adds nothing; memory is pod-level.
    assert pod_non_zero_requests(spec) == (500, 1024**3)
    spec_without_cpu = {
        "resources": {"requests": {"memory": "1Gi"}},
        "containers": [{"name": "a"}, {"name": "b"}],
    }
    # No cpu anywhere: each container counts the default.
    assert pod_non_zero_requests(spec_without_cpu) == (2 * DEFAULT_MILLI_CPU_REQUEST, 1024**3)


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


def _running(spec_cpu: str, actuated: str | None, allocated: str | None, **status: Any) -> Pod:
    container_status: dict[str, Any] = {"name": "main"}
    if actuated is not None:
        container_status["resources"] = {"requests": {"cpu": actuated}}
    if allocated is not None:
        container_status["allocatedResources"] = {"cpu": allocated}
    raw = make_pod("p").node("n").req(cpu=spec_cpu).dict()
    raw["status"] = {"phase": "Running", "containerStatuses": [container_status], **status}
    return Pod.from_dict(raw)


INFEASIBLE = {
    "conditions": [{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}]
}
DEFERRED = {"conditions": [{"type": "PodResizePending", "status": "True", "reason": "Deferred"}]}


@pytest.mark.parametrize(
    ("pod", "cpu"),
    [
        # A resize down counts once the kubelet has actuated it, not before.
        pytest.param(_running("1", "2", "2"), 2000, id="resize-down-pending"),
        pytest.param(_running("1", "1", "1"), 1000, id="resize-down-done"),
        # A resize up counts at once, even while the kubelet defers it.
        pytest.param(_running("3", "1", "1", **DEFERRED), 3000, id="resize-up-deferred"),
        pytest.param(_running("1", "1", "2"), 2000, id="allocated-ahead-of-actuated"),
        # An infeasible resize no longer holds room for the spec.
        pytest.param(_running("4", "1", "1", **INFEASIBLE), 1000, id="resize-up-infeasible"),
        # No resources reported: the spec alone.
        pytest.param(_running("1", None, "3"), 1000, id="no-reported-resources"),
    ],
)
def test_a_running_pods_requests_follow_in_place_resize(pod: Pod, cpu: int) -> None:
    assert pod.requests["cpu"] == cpu
    assert pod.non_zero_cpu == cpu


def test_finished_init_containers_keep_their_spec_and_sidecars_follow_their_status() -> None:
    raw = make_pod("p").node("n").req(cpu="100m").dict()
    # The regular container reports nothing: its spec (100m) stands.
    raw["spec"]["initContainers"] = [
        {"name": "setup", "image": "i", "resources": {"requests": {"cpu": "200m"}}},
        {
            "name": "proxy",
            "image": "i",
            "restartPolicy": "Always",
            "resources": {"requests": {"cpu": "100m"}},
        },
    ]
    raw["status"] = {
        "initContainerStatuses": [
            {"name": "setup", "resources": {"requests": {"cpu": "3"}}},
            {"name": "proxy", "resources": {"requests": {"cpu": "500m"}}},
        ]
    }
    # Steady: 100m + the sidecar's 500m; the setup step: 200m + nothing before it.
    assert Pod.from_dict(raw).requests["cpu"] == 600


def test_pod_level_requests_follow_the_pods_reported_resources() -> None:
    raw = make_pod("p").node("n").req(cpu="100m").dict()
    raw["spec"]["resources"] = {"requests": {"cpu": "1", "memory": "1Gi"}}
    raw["status"] = {"resources": {"requests": {"cpu": "2", "memory": "512Mi"}}}
    pod = Pod.from_dict(raw)
    assert (pod.requests["cpu"], pod.requests["memory"]) == (2000, 1024**3)


def test_only_the_spec_counts_without_the_status() -> None:
    pod = _running("1", "2", "2")
    assert pod_requests(pod.raw["spec"])["cpu"] == 1000


def test_pod_level_hugepages_replace_the_container_sum_as_cpu_and_memory_do() -> None:
    spec = {
        "containers": [
            {
                "name": "c",
                "resources": {
                    "requests": {"hugepages-2Mi": "2Mi", "memory": "1Gi"},
                    "limits": {"hugepages-2Mi": "2Mi", "memory": "1Gi"},
                },
            }
        ],
        "resources": {
            "requests": {"hugepages-2Mi": "8Mi", "memory": "2Gi", "example.com/foo": "1"},
            "limits": {"hugepages-2Mi": "8Mi", "memory": "2Gi"},
        },
    }
    # An extended resource is no pod-level resource: the containers' sum stands for it.
    assert pod_requests(spec) == {"hugepages-2Mi": 8 * 1024**2, "memory": 2 * 1024**3}
    assert pod_limits(spec) == {"hugepages-2Mi": 8 * 1024**2, "memory": 2 * 1024**3}
