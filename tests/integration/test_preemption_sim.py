"""Preemption end to end: the real scheduler and the in-memory cluster, on a fake clock."""

from __future__ import annotations

import asyncio
import copy
from typing import Any

from plugins.default_preemption import SPEC
from scheduler.framework import CycleState
from scheduler.framework import Handle
from scheduler.framework import Pod
from scheduler.framework import Status
from scheduler.framework.errors import APIError
from scheduler.framework.spec import PluginSpec
from scheduler.runtime.discovery import PluginRegistry
from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.integration.harness import Harness

ENABLED = {"enabled": [{"name": "DefaultPreemption"}]}
CONFIG: dict[str, Any] = {
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {"preEnqueue": ENABLED, "postFilter": ENABLED},
        }
    ]
}


def extra_plugins() -> list[PluginSpec]:
    """The plugin itself, unless it is already installed as an entry point."""
    return [] if SPEC.name in PluginRegistry.discover() else [SPEC]


def node(name: str) -> dict[str, Any]:
    return make_node(name).capacity(cpu="2", memory="8Gi", pods="10").dict()


def bound(name: str, node_name: str, *, cpu: str, priority: int, **labels: str) -> dict[str, Any]:
    return (
        make_pod(name)
        .node(node_name)
        .req(cpu=cpu)
        .priority(priority)
        .labels(**labels)
        .phase("Running")
        .dict()
    )


def budget(name: str, allowed: int, **match: str) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"selector": {"matchLabels": dict(match)}},
        "status": {"disruptionsAllowed": allowed},
    }


async def settle(h: Harness) -> None:
    """Until background preemptions are done and the scheduler has caught up with them."""
    for _ in range(100):
        await h.quiesce()
        if not h.scheduler.background:
            await h.quiesce()
            return
    raise AssertionError("the preemption did not finish")


def pod_names(h: Harness) -> set[str]:
    return {p["metadata"]["name"] for p in h.sim.objects("pods")}


async def test_preempts_the_cheapest_unprotected_node_then_schedules_there() -> None:
    """n1: one low-priority pod protected by a budget; n2: two pods; n3: one pod.

    Without the budget n1 would win (lowest victim priority); with it, n3 does: one victim
    against n2's two of the same priority.
    """
    preemptor = make_pod("vip").req(cpu="2").priority(100).dict()
    async with Harness(CONFIG, extra_plugins=extra_plugins()) as h:
        h.create(
            [
                node("n1"),
                node("n2"),
                node("n3"),
                bound("db", "n1", cpu="2", priority=0, app="db"),
                bound("w1", "n2", cpu="1", priority=10),
                bound("w2", "n2", cpu="1", priority=10),
                bound("big", "n3", cpu="2", priority=10),
                budget("db", 0, app="db"),
                preemptor,
            ]
        )
        await h.schedule_active()
        await settle(h)

        assert pod_names(h) == {"db", "w1", "w2", "vip"}
        assert h.pod("default", "vip")["status"].get("nominatedNodeName") == "n3"
        uid = h.pod("default", "vip")["metadata"]["uid"]
        assert h.event_notes("default", "big", "Preempted") == [
            f"Preempted by pod {uid} on node n3"
        ]
        assert h.event_notes("default", "vip", "FailedScheduling") == [
            "0/3 nodes are available: 3 Insufficient cpu."
        ]

        # The victim's deletion requeued the preemptor, to wait out its backoff.
        assert h.scheduler.queue.locate("default/vip") == "backoff"
        h.clock.advance(10)
        h.scheduler.queue.flush_backoff_completed()
        assert await h.schedule_active() == 1
        assert h.node_of("default", "vip") == "n3"


async def test_violates_a_budget_when_it_is_the_only_way() -> None:
    async with Harness(CONFIG, extra_plugins=extra_plugins()) as h:
        h.create(
            [
                node("n1"),
                bound("db", "n1", cpu="2", priority=0, app="db"),
                budget("db", 0, app="db"),
                make_pod("vip").req(cpu="2").priority(100).dict(),
            ]
        )
        await h.schedule_active()
        await settle(h)
        assert pod_names(h) == {"vip"}
        h.clock.advance(10)
        h.scheduler.queue.flush_backoff_completed()
        await h.schedule_active()
        assert h.node_of("default", "vip") == "n1"


async def test_failed_preemption_is_explained_after_the_filter_reasons() -> None:
    async with Harness(CONFIG, extra_plugins=extra_plugins()) as h:
        h.create(
            [
                *(node(n) for n in ("n1", "n2", "n3")),
                *(bound(f"p{i}", f"n{i}", cpu="2", priority=100) for i in (1, 2, 3)),
                make_pod("vip").req(cpu="2").priority(100).dict(),
            ]
        )
        await h.schedule_active()
        await settle(h)
        assert pod_names(h) == {"p1", "p2", "p3", "vip"}
        assert h.event_notes("default", "vip", "FailedScheduling") == [
            # DefaultPreemption is enabled at postFilter itself, so it runs before the
            # multiPoint DynamicResources, whose reason follows.
            "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: "
            "3 No preemption victims found for incoming pod., no new claims to deallocate"
        ]


async def test_deletion_events_arriving_before_the_calls_return_still_release_the_preemptor() -> (
    None
):
    """With the watch faster than the API's answers, each victim's deletion reaches the queue
    while the preemption is still running: the first one finds the preemptor gated, the last
    one releases it."""
    async with Harness(CONFIG, extra_plugins=extra_plugins()) as h:
        h.create(
            [
                node("n1"),
                bound("a", "n1", cpu="1", priority=0),
                bound("b", "n1", cpu="1", priority=0),
                make_pod("vip").req(cpu="2").priority(100).dict(),
            ]
        )
        delete = h.sim.delete_pod
        seen: list[str] = []

        async def slow_delete(namespace: str, name: str, uid: str = "") -> None:
            await delete(namespace, name, uid)
            await h.quiesce()  # the informers and the queue handle the deletion first
            seen.append(h.scheduler.queue.locate("default/vip"))

        h.sim.delete_pod = slow_delete  # type: ignore[method-assign]
        await h.schedule_active()
        await settle(h)

        assert pod_names(h) == {"vip"}
        assert seen == ["gated", "backoff"]
        h.clock.advance(10)
        h.scheduler.queue.flush_backoff_completed()
        await h.schedule_active()
        assert h.node_of("default", "vip") == "n1"


async def test_a_preemption_whose_calls_fail_sends_the_preemptor_back_to_the_active_queue() -> None:
    """The victim's DisruptionTarget patch fails: no deletion will come to requeue the
    preemptor, so the scheduler activates it instead of leaving it for the 5-minute flush."""
    async with Harness(CONFIG, extra_plugins=extra_plugins()) as h:
        h.create(
            [
                node("n1"),
                bound("a", "n1", cpu="2", priority=0),
                make_pod("vip").req(cpu="2").priority(100).dict(),
            ]
        )
        h.sim.fail_next("patch", "pods", APIError(500, "etcd is unhappy"))
        await h.schedule_active()
        await settle(h)

        # Activated, it was tried again at once and preempted again, successfully this time.
        assert pod_names(h) == {"vip"}
        registry = h.scheduler.metrics.registry
        assert registry.get_sample_value("scheduler_preemption_attempts_total") == 2
        assert registry.get_sample_value("scheduler_preemption_victims_count") == 2
        for result in ("error", "success"):
            total = registry.get_sample_value(
                "scheduler_preemption_goroutines_execution_total", {"result": result}
            )
            assert total == 1, result


async def test_a_sampled_cycle_times_the_plugins_preemptions_dry_run_calls() -> None:
    """Upstream times each Filter and PreFilter extension call of the dry run, as it times the
    calls of the main search."""
    preemptor = (
        make_pod("vip")
        .req(cpu="2")
        .priority(100)
        .pod_affinity("required", "kubernetes.io/hostname", {"app": "other"}, anti=True)
        .dict()
    )
    async with Harness(CONFIG, extra_plugins=extra_plugins()) as h:
        h.scheduler.sampler.percent = 100
        h.create([node("n1"), bound("low", "n1", cpu="2", priority=0), preemptor])
        await h.schedule_active()
        await settle(h)
        assert h.pod("default", "vip")["status"].get("nominatedNodeName") == "n1"
        registry = h.scheduler.metrics.registry

        def calls(plugin: str, point: str) -> float | None:
            return registry.get_sample_value(
                "scheduler_plugin_execution_duration_seconds_count",
                {"plugin": plugin, "extension_point": point, "status": "Success"},
            )

        # The dry run took "low" off n1 and filtered the node without it (the search's Filter
        # never reached InterPodAffinity: NodeResourcesFit, before it, rejected n1); then it
        # tried to spare "low": put it back (NodeResourcesFit rejects again) and took it off.
        assert calls("InterPodAffinity", "PreFilterExtensionRemovePod") == 2
        assert calls("InterPodAffinity", "PreFilterExtensionAddPod") == 1
        assert calls("InterPodAffinity", "Filter") == 1

        def evaluations(plugin: str) -> float | None:
            return registry.get_sample_value(
                "scheduler_plugin_evaluation_total",
                {"plugin": plugin, "extension_point": "Filter", "profile": "default-scheduler"},
            )

        # Every Filter call counts, the dry run's as the search's: NodeResourcesFit ran on n1
        # in the search, without "low" and with it back; InterPodAffinity only without "low".
        assert evaluations("NodeResourcesFit") == 3
        assert evaluations("InterPodAffinity") == 1


class HeldAtPreBind:
    """A PreBind plugin that holds every pod until the test lets it go (attaching a volume,
    say); it records the pods whose PreBind was interrupted."""

    name = "HeldAtPreBind"

    def __init__(self, args: None, handle: Handle) -> None:
        self.release = asyncio.Event()
        self.interrupted: list[str] = []
        HeldAtPreBind.instance = self

    async def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.interrupted.append(pod.name)
            raise
        return Status()

    instance: HeldAtPreBind


async def test_a_victim_at_pre_bind_is_sent_back_to_the_queue_not_deleted() -> None:
    """Upstream cancels a victim's PreBind instead of deleting it: the victim was never bound,
    so it only loses its place and is retried."""
    held = PluginSpec(name="HeldAtPreBind", plugin_class=HeldAtPreBind)
    plugins = {
        **CONFIG["profiles"][0]["plugins"],
        "preBind": {"enabled": [{"name": "HeldAtPreBind"}]},
    }
    config = {"profiles": [{"schedulerName": "default-scheduler", "plugins": plugins}]}
    async with Harness(config, extra_plugins=[*extra_plugins(), held]) as h:
        h.pre_bind_holds_pods = True
        h.create([node("n1"), make_pod("low").req(cpu="2").priority(0).dict()])
        await h.schedule_active()
        await h.quiesce()
        assert h.scheduler.pods_in_pre_bind.get(h.pod("default", "low")["metadata"]["uid"])

        h.create([make_pod("vip").req(cpu="2").priority(100).dict()])
        await h.schedule_active()
        await settle(h)

        assert HeldAtPreBind.instance.interrupted == ["low"]
        assert pod_names(h) == {"low", "vip"}  # nothing deleted
        assert h.node_of("default", "low") is None
        uid = h.pod("default", "vip")["metadata"]["uid"]
        assert h.event_notes("default", "low", "Preempted") == [
            f"Preempted by pod {uid} on node n1 (in kube-scheduler memory)."
        ]
        # The plugin cancelled is named, as upstream names a PreBind whose context was
        # cancelled, and its PreBind counts as an Error.
        assert h.event_notes("default", "low", "FailedScheduling") == [
            'running PreBind plugin "HeldAtPreBind": preempted by DefaultPreemption'
        ]
        text = h.scheduler.metrics.render().decode()
        assert (
            'scheduler_framework_extension_point_duration_seconds_count{extension_point="PreBind",'
            'profile="default-scheduler",status="Error"} 1.0'
        ) in text
        assert len(h.scheduler.pods_in_pre_bind) == 0
        # The node it held is free: the preemptor takes it once its backoff is over.
        h.clock.advance(10)
        h.scheduler.queue.flush_backoff_completed()
        await h.schedule_active()
        await h.quiesce()
        assert h.scheduler.pods_in_pre_bind.get(uid)
        HeldAtPreBind.instance.release.set()
        h.pre_bind_holds_pods = False  # nothing holds the cycle now: settling waits for it
        await h.quiesce()
        assert h.node_of("default", "vip") == "n1"


def four_of_one_cpu(h: Harness) -> None:
    """A full 4-CPU node of pods a, b, c, d: one priority and no start time, so they tie and
    upstream reprieves them in reverse node order, its cache's order."""
    full = make_node("n1").capacity(cpu="4", memory="8Gi", pods="10").dict()
    h.create([full, *(bound(name, "n1", cpu="1", priority=0) for name in "abcd")])


async def test_a_deleted_pods_place_on_the_node_decides_which_tied_pod_is_preempted() -> None:
    async with Harness(CONFIG, extra_plugins=extra_plugins()) as h:
        four_of_one_cpu(h)
        await h.quiesce()
        await h.sim.delete_pod("default", "a", "")
        await h.quiesce()
        h.create([make_pod("vip").req(cpu="2").priority(100).dict()])
        await h.schedule_active()
        await settle(h)
        # d took a's slot: node order d, b, c, reprieved c, b, d; only d has to go.
        assert pod_names(h) == {"b", "c", "vip"}


async def test_an_updated_pod_moves_to_the_end_of_the_node_as_upstream_keeps_it() -> None:
    async with Harness(CONFIG, extra_plugins=extra_plugins()) as h:
        four_of_one_cpu(h)
        await h.quiesce()
        b = copy.deepcopy(h.pod("default", "b"))
        b["metadata"].setdefault("labels", {})["touched"] = "yes"
        await h.sim.update("pods", b)
        await h.quiesce()
        h.create([make_pod("vip").req(cpu="2").priority(100).dict()])
        await h.schedule_active()
        await settle(h)
        # Node order a, d, c, b, reprieved b, c, d, a: b and c stay.
        assert pod_names(h) == {"b", "c", "vip"}
