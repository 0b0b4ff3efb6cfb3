"""Elastic quotas end to end in the in-memory cluster, on a fake clock."""

from __future__ import annotations

from typing import Any

from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.integration.gangs import run_for
from tests.integration.harness import Harness

CONFIG: dict[str, Any] = {
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {
                "multiPoint": {"enabled": [{"name": "CapacityScheduling"}]},
                "postFilter": {
                    "enabled": [{"name": "CapacityScheduling"}],
                    "disabled": [{"name": "*"}],
                },
            },
        }
    ]
}


def quota(namespace: str, *, min_cpu: str | None, max_cpu: str | None) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if min_cpu is not None:
        spec["min"] = {"cpu": min_cpu}
    if max_cpu is not None:
        spec["max"] = {"cpu": max_cpu}
    return {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "ElasticQuota",
        "metadata": {"name": f"{namespace}-quota", "namespace": namespace},
        "spec": spec,
    }


def namespace(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def pods(ns: str, prefix: str, count: int, cpu: str) -> list[dict[str, Any]]:
    return [make_pod(f"{prefix}-{i}", ns).req(cpu=cpu).dict() for i in range(count)]


def cluster(nodes: int, cpu: str) -> list[dict[str, Any]]:
    return [make_node(f"n{i}").capacity(cpu=cpu, pods="110").dict() for i in range(nodes)]


def bound(h: Harness, ns: str) -> list[str]:
    return sorted(
        p["metadata"]["name"]
        for p in h.sim.objects("pods")
        if p["metadata"]["namespace"] == ns and (p.get("spec") or {}).get("nodeName")
    )


def present(h: Harness, ns: str) -> list[str]:
    return sorted(
        p["metadata"]["name"] for p in h.sim.objects("pods") if p["metadata"]["namespace"] == ns
    )


def quota_used(h: Harness, ns: str) -> dict[str, str]:
    found = next(q for q in h.sim.objects("elasticquotas") if q["metadata"]["namespace"] == ns)
    return dict((found.get("status") or {}).get("used") or {})


async def test_upstream_demo_borrow_up_to_max_then_reclaim_by_preemption() -> None:
    """The plugin's documented demo: two quotas of min 4 / max 6 CPU on 8 CPUs."""
    async with Harness(CONFIG) as h:
        h.create(
            [
                *cluster(4, "2"),
                namespace("quota1"),
                namespace("quota2"),
                quota("quota1", min_cpu="4", max_cpu="6"),
                quota("quota2", min_cpu="4", max_cpu="6"),
                *pods("quota1", "app1", 4, "2"),
            ]
        )
        await run_for(h, 5)
        # Past min (4) up to max (6): three run, the fourth waits on the max.
        assert len(bound(h, "quota1")) == 3
        waiting = next(n for n in present(h, "quota1") if n not in bound(h, "quota1"))
        assert any(
            "ElasticQuota quota1 is more than Max" in note
            for note in h.event_notes("quota1", waiting, "FailedScheduling")
        )
        assert quota_used(h, "quota1") == {"cpu": "6"}
        borrowers = set(bound(h, "quota1"))

        h.create(pods("quota2", "app2", 2, "2"))
        await run_for(h, 10)
        # quota2 reclaims its min: one quota1 pod (a borrower) is preempted, nothing else.
        assert bound(h, "quota2") == ["app2-0", "app2-1"]
        assert len(bound(h, "quota1")) == 2
        assert set(bound(h, "quota1")) < borrowers
        assert len(present(h, "quota1")) == 3  # the pending fourth pod and two that run
        assert quota_used(h, "quota1") == {"cpu": "4"}
        assert quota_used(h, "quota2") == {"cpu": "4"}
        text = h.scheduler.metrics.render().decode()
        for family, value in (("used", "4.0"), ("min", "4.0"), ("max", "6.0")):
            assert (
                f'scheduler_elasticquota_{family}{{namespace="quota1",resource="cpu"}} {value}'
                in (text)
            )


async def test_borrowed_min_is_given_back_when_the_lender_needs_it() -> None:
    async with Harness(CONFIG) as h:
        h.create(
            [
                *cluster(2, "2"),
                namespace("a"),
                namespace("b"),
                quota("a", min_cpu="2", max_cpu="4"),
                quota("b", min_cpu="2", max_cpu="4"),
                *pods("a", "a", 4, "1"),
            ]
        )
        await run_for(h, 5)
        assert len(bound(h, "a")) == 4  # two of them on b's idle min
        h.create(pods("b", "b", 2, "1"))
        await run_for(h, 20)
        # Each namespace ends at its min; exactly two of a's pods (the borrowing ones) went.
        assert bound(h, "b") == ["b-0", "b-1"]
        assert len(bound(h, "a")) == 2
        assert len(present(h, "a")) == 2


async def test_max_is_never_exceeded_even_with_room() -> None:
    async with Harness(CONFIG) as h:
        h.create(
            [
                *cluster(4, "4"),
                namespace("a"),
                quota("a", min_cpu="4", max_cpu="2"),
                *pods("a", "a", 4, "1"),
            ]
        )
        await run_for(h, 5)
        assert len(bound(h, "a")) == 0
        note = h.event_notes("a", "a-0", "FailedScheduling")
        assert any("spec.min.cpu: must not be above max" in n for n in note), note


async def test_sum_of_mins_caps_borrowing() -> None:
    async with Harness(CONFIG) as h:
        h.create(
            [
                *cluster(4, "4"),
                namespace("a"),
                namespace("b"),
                quota("a", min_cpu="2", max_cpu="10"),
                quota("b", min_cpu="1", max_cpu="10"),
                *pods("a", "a", 6, "1"),
            ]
        )
        await run_for(h, 5)
        # 16 CPUs free, but a may only borrow b's unused min: 2 + 1.
        assert len(bound(h, "a")) == 3
        waiting = [n for n in present(h, "a") if n not in bound(h, "a")]
        assert any(
            "total ElasticQuota used is more than min" in note
            for note in h.event_notes("a", waiting[0], "FailedScheduling")
        )


async def test_max_caps_a_namespace_with_a_valid_quota() -> None:
    async with Harness(CONFIG) as h:
        h.create(
            [
                *cluster(4, "4"),
                namespace("a"),
                quota("a", min_cpu="1", max_cpu="2"),
                quota("b", min_cpu="8", max_cpu=None),
                namespace("b"),
                *pods("a", "a", 4, "1"),
            ]
        )
        await run_for(h, 5)
        assert len(bound(h, "a")) == 2


def pod_at(
    ns: str, name: str, cpu: str, *, priority: int = 0, app: str = "", node: str = ""
) -> dict[str, Any]:
    builder = make_pod(name, ns).req(cpu=cpu).priority(priority)
    if app:
        builder = builder.labels(app=app)
    if node:
        builder = builder.node(node)
    return builder.dict()


def budget(ns: str, app: str, allowed: int) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": f"{app}-budget", "namespace": ns},
        "spec": {"selector": {"matchLabels": {"app": app}}},
        "status": {"disruptionsAllowed": allowed},
    }


async def test_a_namespace_without_a_quota_preempts_only_unquotaed_pods() -> None:
    """Namespaces without an ElasticQuota preempt as under DefaultPreemption, among themselves:
    a quota'd namespace's pods are never their victims."""
    async with Harness(CONFIG) as h:
        h.create(
            [
                *cluster(2, "2"),
                namespace("free"),
                namespace("q"),
                quota("q", min_cpu="2", max_cpu="4"),
                pod_at("q", "quotaed", "2"),
            ]
        )
        await run_for(h, 2)
        h.create([pod_at("free", "low", "2")])
        await run_for(h, 2)
        assert bound(h, "q") == ["quotaed"] and bound(h, "free") == ["low"]
        h.create([pod_at("free", "high", "2", priority=100)])
        await run_for(h, 10)
        assert bound(h, "free") == ["high"]
        assert bound(h, "q") == ["quotaed"]
        assert h.event_notes("free", "low", "Preempted")


async def test_reclaiming_a_lent_min_takes_borrowers_only_until_they_are_back_at_min() -> None:
    """A namespace within its min reclaims from namespaces above theirs, never from itself, and
    a lender stops being a victim once its use is back at its min."""
    async with Harness(CONFIG) as h:
        h.create(
            [
                *cluster(1, "4"),
                namespace("a"),
                namespace("b"),
                quota("a", min_cpu="2", max_cpu="4"),
                quota("b", min_cpu="2", max_cpu="4"),
                pod_at("a", "a-low", "1"),
                *(pod_at("b", f"b-{i}", "1", priority=1) for i in range(3)),
            ]
        )
        await run_for(h, 5)
        assert bound(h, "a") == ["a-low"] and len(bound(h, "b")) == 3
        h.create([pod_at("a", "a-high", "1", priority=100)])
        await run_for(h, 10)
        # a-low is the least important pod there, but its namespace is within its min, so it
        # stays; b is at 3 of a min of 2, so exactly one of its pods goes.
        assert bound(h, "a") == ["a-high", "a-low"]
        assert len(bound(h, "b")) == 2 and len(present(h, "b")) == 2


async def test_reclaim_prefers_the_node_where_no_disruption_budget_breaks() -> None:
    async with Harness(CONFIG) as h:
        h.create(
            [
                *cluster(2, "1"),
                namespace("a"),
                namespace("b"),
                quota("a", min_cpu="1", max_cpu="2"),
                quota("b", min_cpu="1", max_cpu="2"),
                # Already bound: "guarded" on the node the dry run tries first.
                pod_at("b", "guarded", "1", app="guarded", node="n0"),
                pod_at("b", "free", "1", node="n1"),
                budget("b", "guarded", 0),
            ]
        )
        h.create([pod_at("a", "a-0", "1", priority=100)])
        await run_for(h, 10)
        # Both b pods borrow a's min and either would make room; the budget spares "guarded".
        assert bound(h, "b") == ["guarded"]
        assert h.node_of("a", "a-0") == "n1"
