"""HTTP extenders on a real apiserver: the daemon and upstream kube-scheduler call the same
extender server (a thread of this test process) the same way, and fail the same way when it
is down. The extender binds through the API server itself, as a binding extender must, and
decides preemption's candidates with its preempt verb."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduler.testing import make_pod
from tests.e2e.api_client import ApiClient
from tests.e2e.binaries import ControlPlaneBinaries
from tests.e2e.controlplane import ControlPlane
from tests.e2e.daemon import DaemonLauncher
from tests.e2e.daemon import poll_until
from tests.e2e.processes import ManagedProcess
from tests.e2e.processes import free_loopback_port
from tests.e2e.reaper import Reaper
from tests.e2e.test_daemon_preemption import running_pod
from tests.e2e.workload import Workload
from tests.e2e.workload import pod_scheduled_condition
from tests.e2e.workload import unique
from tests.extender_server import Binder
from tests.extender_server import ExtenderBehaviour
from tests.extender_server import RecordingExtender
from tests.extender_server import extender_config
from tests.extender_server import running_extender

pytestmark = pytest.mark.e2e

# Upper bounds for waiting on the schedulers, not synchronisation delays.
BIND_TIMEOUT_S = 60.0
FAILURE_TIMEOUT_S = 60.0


def api_binder(admin: ApiClient) -> Binder:
    def bind(namespace: str, name: str, uid: str, node: str) -> str:
        binding = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": {"name": name, "namespace": namespace, "uid": uid},
            "target": {"kind": "Node", "name": node},
        }
        made = admin.post(f"/api/v1/namespaces/{namespace}/pods/{name}/binding", binding)
        return "" if made.status == 201 else f"binding refused: {made.status} {made.body}"

    return bind


@dataclass
class Schedulers:
    """Starts our daemon or upstream kube-scheduler with one extender configured."""

    control_plane: ControlPlane
    binaries: ControlPlaneBinaries
    daemons: DaemonLauncher
    tmp_path: Path

    def config(self, scheduler: str, extender: dict[str, Any]) -> Path:
        config = {
            "apiVersion": "kubescheduler.config.k8s.io/v1",
            "kind": "KubeSchedulerConfiguration",
            "clientConnection": {"kubeconfig": str(self.control_plane.kubeconfig_path)},
            "leaderElection": {"leaderElect": False},
            "profiles": [{"schedulerName": scheduler}],
            "extenders": [extender],
        }
        path = self.tmp_path / f"{scheduler}.yaml"
        path.write_text(yaml.safe_dump(config))
        return path

    @contextmanager
    def running(self, which: str, scheduler: str, extender: dict[str, Any]) -> Iterator[None]:
        """`which` ("ours" or "upstream") scheduling as `scheduler` until the block ends."""
        config = self.config(scheduler, extender)
        if which == "ours":
            daemon = self.daemons.start(scheduler, extra_args=[f"--config={config}"])
            try:
                yield
            finally:
                daemon.stop()
            return
        kubeconfig = self.control_plane.kubeconfig_path
        process = ManagedProcess(
            "kube-scheduler",
            [
                str(self.binaries.kube_scheduler),
                f"--config={config}",
                f"--authentication-kubeconfig={kubeconfig}",
                f"--authorization-kubeconfig={kubeconfig}",
                "--bind-address=127.0.0.1",
                f"--secure-port={free_loopback_port()}",
            ],
            self.tmp_path / f"{scheduler}.log",
        )
        process.start()
        try:
            yield
        finally:
            process.stop()


@pytest.fixture
def schedulers(
    control_plane: ControlPlane,
    e2e_binaries: ControlPlaneBinaries,
    daemons: DaemonLauncher,
    tmp_path: Path,
) -> Schedulers:
    return Schedulers(control_plane, e2e_binaries, daemons, tmp_path)


def _names(body: dict[str, Any]) -> set[str]:
    return {n["metadata"]["name"] for n in body["Nodes"]["items"]}


def _run_with_extender(
    which: str, schedulers: Schedulers, workload: Workload, nodes: list[str]
) -> tuple[RecordingExtender, str, str]:
    """One pod through `which` scheduler with a filtering, prioritizing, binding extender."""
    behaviour = ExtenderBehaviour(
        reject={nodes[0]},
        scores={nodes[1]: 1, nodes[2]: 10},
        binder=api_binder(schedulers.control_plane.admin_client()),
    )
    scheduler = unique(f"ext-{which}")
    with running_extender(behaviour) as extender:
        config = extender_config(extender.url, prioritize_weight=2, bind=True)
        with schedulers.running(which, scheduler, config):
            [pod] = workload.create_pods([unique("p")], scheduler)
            placed = workload.wait_bound([pod], timeout_s=BIND_TIMEOUT_S)
            uid = workload.pods()[pod]["metadata"]["uid"]
    return extender, placed[pod], uid


def test_an_extender_filters_prioritizes_and_binds_as_kube_scheduler_calls_it(
    schedulers: Schedulers, workload: Workload
) -> None:
    nodes = workload.create_nodes(3)
    seen = {
        which: _run_with_extender(which, schedulers, workload, nodes)
        for which in ("ours", "upstream")
    }
    for which, (extender, node, uid) in seen.items():
        assert node == nodes[2], which
        assert extender.verbs() == ["filter", "prioritize", "bind"], which
        [filtered] = extender.calls_of("filter")
        [prioritized] = extender.calls_of("prioritize")
        [binding] = extender.calls_of("bind")
        # The pod's node selector keeps other tests' nodes away before the extender is asked.
        assert _names(filtered) == set(nodes), which
        assert _names(prioritized) == set(nodes[1:]), which
        assert filtered["NodeNames"] is None and prioritized["NodeNames"] is None, which
        assert binding["Node"] == nodes[2] and binding["PodUID"] == uid, which
        assert set(binding) == {"PodName", "PodNamespace", "PodUID", "Node"}, which
    ours, upstream = seen["ours"][0], seen["upstream"][0]
    assert set(ours.calls_of("filter")[0]) == set(upstream.calls_of("filter")[0])


def _stuck_message(workload: Workload, pod: str) -> tuple[str, str] | None:
    condition = pod_scheduled_condition(workload.pods()[pod]) or {}
    if condition.get("status") != "False":
        return None
    return str(condition.get("reason")), str(condition.get("message"))


def test_a_down_extender_keeps_pods_pending_unless_ignorable(
    schedulers: Schedulers, workload: Workload
) -> None:
    workload.create_nodes(2)
    down = f"http://127.0.0.1:{free_loopback_port()}"
    expected = f'Post "{down}/filter": dial tcp {down[7:]}: connect: connection refused'
    messages = {}
    for which in ("ours", "upstream"):
        scheduler = unique(f"down-{which}")
        with schedulers.running(which, scheduler, extender_config(down)):
            [pod] = workload.create_pods([unique("p")], scheduler)
            messages[which] = poll_until(
                partial(_stuck_message, workload, pod),
                f"{which}: PodScheduled=False",
                timeout_s=FAILURE_TIMEOUT_S,
            )
            assert not workload.pods()[pod]["spec"].get("nodeName")
            [event, *_] = workload.wait_events(
                "FailedScheduling", [pod], timeout_s=FAILURE_TIMEOUT_S
            )[pod]
            assert event["note"] == expected, which
    assert messages["ours"] == messages["upstream"] == ("SchedulerError", expected)

    scheduler = unique("down-ignorable")
    ignorable = extender_config(down, prioritize_weight=1, ignorable=True)
    with schedulers.running("ours", scheduler, ignorable):
        pods = workload.create_pods([unique("p"), unique("p")], scheduler)
        workload.wait_bound(pods, timeout_s=BIND_TIMEOUT_S)


def _preempt_with_extender(
    which: str, schedulers: Schedulers, workload: Workload, admin: ApiClient
) -> tuple[RecordingExtender, dict[str, str], str, set[str]]:
    """Two full nodes, the cheaper victim on the first; the extender drops the first from
    preemption's candidates. The preemptor's node, the pods by name, and the reaped ones."""
    cheap_node, dear_node = workload.create_nodes(2, cpu="2")
    cheap = running_pod(workload, unique("cheap"), cheap_node, cpu="2", priority=0, app="a")
    dear = running_pod(workload, unique("dear"), dear_node, cpu="2", priority=10, app="a")
    scheduler = unique(f"preempt-{which}")
    behaviour = ExtenderBehaviour(preempt_drop={cheap_node})
    with running_extender(behaviour) as extender:
        config = extender_config(extender.url, filter_verb=False, preempt=True)
        with schedulers.running(which, scheduler, config), Reaper(admin, workload.namespace) as r:
            builder = make_pod(unique("vip"), workload.namespace).scheduler(scheduler)
            builder.priority(100).req(cpu="2").node_selector(**workload.node_selector)
            manifest = builder.dict()
            manifest["metadata"].pop("uid")
            vip = workload.create_pod(manifest)["metadata"]["name"]
            placed = workload.wait_bound([vip], timeout_s=BIND_TIMEOUT_S)
    workload.delete_nodes()
    names = {"cheap": cheap["metadata"]["name"], "dear": dear["metadata"]["name"], "vip": vip}
    assert placed[vip] == dear_node, which
    return extender, names, dear_node, set(r.reaped)


def test_an_extender_s_preempt_verb_decides_the_victims_as_kube_scheduler_asks_it(
    schedulers: Schedulers, workload: Workload, admin: ApiClient
) -> None:
    seen = {
        which: _preempt_with_extender(which, schedulers, workload, admin)
        for which in ("ours", "upstream")
    }
    bodies = {}
    for which, (extender, names, _dear_node, reaped) in seen.items():
        # The cheaper victim was on the node the extender dropped: the dearer one went.
        assert reaped == {names["dear"]}, which
        [sent, *_] = extender.calls_of("preempt")
        assert sent["Pod"]["metadata"]["name"] == names["vip"], which
        assert sent["NodeNameToMetaVictims"] is None, which
        victims = {
            node: ([p["metadata"]["name"] for p in v["Pods"]], v["NumPDBViolations"])
            for node, v in sent["NodeNameToVictims"].items()
        }
        assert sorted(victims.values()) == [([names["cheap"]], 0), ([names["dear"]], 0)], which
        bodies[which] = sent
    assert set(bodies["ours"]) == set(bodies["upstream"])
    assert set(bodies["ours"]["NodeNameToVictims"][seen["ours"][2]]) == set(
        bodies["upstream"]["NodeNameToVictims"][seen["upstream"][2]]
    )
