"""Plugin faults and a broken scheduling loop, with the daemon on a real apiserver.

The daemon runs with exactly the RBAC of deploy/ and the `Faulty` test plugin enabled at every
extension point. A pod per fault (raising at each point, a wrong type, a score of 150, NaN, and
a PreBind the API refuses with 403) must get a FailedScheduling Event and a PodScheduled=False
condition naming the plugin while a healthy pod is bound; once the fault annotations are
removed, every pod must be bound. Then a fault in the loop machinery of the leader of two
replicas must make it exit non-zero so that the standby takes over and binds the rest.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.e2e.daemon import DaemonLauncher
from tests.e2e.daemon import LeaderElection
from tests.e2e.daemon import SchedulerDaemon
from tests.e2e.daemon import poll_until
from tests.e2e.test_daemon_rbac import Deployed
from tests.e2e.test_daemon_rbac import deployed  # noqa: F401 - the module fixture
from tests.e2e.workload import Workload
from tests.e2e.workload import pod_scheduled_condition
from tests.e2e.workload import unique
from tests.fault_plugin import BREAK_LOOP
from tests.fault_plugin import FAILING_POINTS
from tests.fault_plugin import NAME
from tests.fault_plugin import fault_annotations
from tests.fault_plugin import profile_plugins

pytestmark = pytest.mark.e2e

REPO_ROOT = Path(__file__).resolve().parents[2]
# Upper bounds for waiting, not synchronisation delays. Error backoff is at most 10 s.
FAILURE_TIMEOUT_S = 60.0
BIND_TIMEOUT_S = 90.0
ELECTION_TIMEOUT_S = 30.0
EXIT_TIMEOUT_S = 30.0
EXIT_SCHEDULER_FAILED = 255

CASES = {
    **{f"{point.lower()}-raises": (point, "raise") for point in FAILING_POINTS},
    "filter-wrong-type": ("Filter", "wrong-type"),
    "score-150": ("Score", "score-150"),
    "score-nan": ("Score", "nan"),
    "prebind-forbidden": ("PreBind", "forbidden"),
}


def _config(base: dict[str, Any], tmp_path: Path, plugins: dict[str, Any]) -> Path:
    config = copy.deepcopy(base)
    config["profiles"] = [{"schedulerName": "placeholder", "plugins": plugins}]
    path = tmp_path / f"config-{unique('c')}.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def _with_test_plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    # The daemons import the test plugins with --plugin; they live in this repository's tests.
    monkeypatch.setenv("PYTHONPATH", str(REPO_ROOT))


def _create(workload: Workload, name: str, scheduler: str, annotations: dict[str, str]) -> str:
    manifest = workload.pod_manifest(name, scheduler)
    manifest["metadata"]["annotations"] = annotations
    workload.create_pod(manifest)
    return name


def _failed_by_error(workload: Workload, names: list[str]) -> dict[str, str] | None:
    """Each pod's condition message once every one is PodScheduled=False by SchedulerError."""
    pods = workload.pods()
    messages = {}
    for name in names:
        condition = pod_scheduled_condition(pods[name]) or {}
        if condition.get("reason") != "SchedulerError":
            return None
        messages[name] = str(condition.get("message", ""))
    return messages


def _stop_faults(workload: Workload, names: list[str]) -> None:
    patch = {"metadata": {"annotations": None}}
    for name in names:
        answer = workload.admin.request(
            "PATCH",
            f"/api/v1/namespaces/{workload.namespace}/pods/{name}",
            patch,
            content_type="application/merge-patch+json",
        )
        assert answer.status == 200, answer


def test_every_plugin_fault_reaches_the_pod_and_the_pod_binds_once_it_stops(
    daemons: DaemonLauncher,
    workload: Workload,
    deployed: Deployed,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _with_test_plugins(monkeypatch)
    ours = unique("sched")
    lease = deployed.config["leaderElection"]
    workload.create_nodes(2)
    config = _config(deployed.config, tmp_path, profile_plugins())
    daemon = daemons.start(
        ours,
        kubeconfig=deployed.kubeconfig,
        leader_election=LeaderElection(lease["resourceNamespace"], lease["resourceName"]),
        extra_args=[f"--config={config}", "--plugin=tests.fault_plugin:SPEC"],
    )
    faulty = [
        _create(workload, case, ours, fault_annotations(point, kind))
        for case, (point, kind) in CASES.items()
    ]
    [fine] = workload.create_pods(["fine"], ours)

    messages = poll_until(
        lambda: _failed_by_error(workload, faulty),
        "PodScheduled=False with reason SchedulerError on every faulty pod",
        timeout_s=FAILURE_TIMEOUT_S,
    )
    workload.wait_bound([fine], timeout_s=BIND_TIMEOUT_S)
    events = workload.wait_events("FailedScheduling", faulty, timeout_s=FAILURE_TIMEOUT_S)
    for name in faulty:
        assert f'"{NAME}"' in messages[name], (name, messages[name])
        assert any(f'"{NAME}"' in str(e.get("note")) for e in events[name]), (name, events[name])
    assert "403" in messages["prebind-forbidden"] or "forbidden" in messages["prebind-forbidden"]
    assert daemon.metrics().total("scheduler_schedule_attempts_total", result="error") >= len(
        faulty
    )

    _stop_faults(workload, faulty)
    workload.wait_bound(faulty, timeout_s=BIND_TIMEOUT_S)
    daemon.require_running("after every plugin fault")


def _leader(replicas: tuple[SchedulerDaemon, ...]) -> SchedulerDaemon:
    def leading() -> list[SchedulerDaemon] | None:
        found = [r for r in replicas if r.records("Successfully acquired lease")]
        return found or None

    [leader] = poll_until(leading, "a replica acquiring the lease", timeout_s=ELECTION_TIMEOUT_S)
    return leader


def test_a_broken_loop_ends_the_leader_and_the_standby_binds_the_rest(
    daemons: DaemonLauncher,
    workload: Workload,
    namespace: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _with_test_plugins(monkeypatch)
    ours = unique("sched")
    election = LeaderElection(namespace, unique("lease"))
    workload.create_nodes(2)
    base = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
    }
    config = _config(base, tmp_path, {"postBind": {"enabled": [{"name": "LoopBreaker"}]}})
    args = [f"--config={config}", "--plugin=tests.fault_plugin:BREAKER_SPEC"]
    replicas = (
        daemons.start(ours, label="a", leader_election=election, extra_args=args),
        daemons.start(ours, label="b", leader_election=election, extra_args=args),
    )
    leader = _leader(replicas)
    [standby] = [r for r in replicas if r is not leader]

    breaker = _create(workload, "breaker", ours, {BREAK_LOOP: "true"})
    workload.wait_bound([breaker], timeout_s=BIND_TIMEOUT_S)
    rest = workload.create_pods([f"rest-{i}" for i in range(5)], ours)

    assert leader.wait_exit(EXIT_TIMEOUT_S) == EXIT_SCHEDULER_FAILED
    failure = leader.records("Scheduler failed; it must be restarted")
    assert failure and "the scheduling queue is corrupt" in str(failure[0])
    workload.wait_bound(rest, timeout_s=BIND_TIMEOUT_S)
    standby.require_running("after taking over")
    assert standby.records("Successfully acquired lease")
