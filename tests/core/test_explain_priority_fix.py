"""The priority fix: the lowest priority at which preemption finds room, and what it takes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from scheduler.app.configuration import load_effective
from scheduler.app.configuration import plugin_registry
from scheduler.app.scenario import ordered_for_loading
from scheduler.app.scenario import parse_documents
from scheduler.cluster.sim import SimCluster
from scheduler.core.explain import fixes
from scheduler.core.explain.model import Explanation
from scheduler.core.explain.model import Fix
from scheduler.core.explain.session import explain_in
from scheduler.objects.pod import Pod
from scheduler.testing import FakeClock


def _node(name: str, cpu: str) -> str:
    return f"""
apiVersion: v1
kind: Node
metadata: {{name: {name}, labels: {{kubernetes.io/hostname: {name}}}}}
status: {{allocatable: {{cpu: "{cpu}", memory: 4Gi, pods: "110"}}}}
"""


def _pod(name: str, cpu: str, priority: int, node: str = "", policy: str = "") -> str:
    extra = f"nodeName: {node}, " if node else ""
    extra += f"preemptionPolicy: {policy}, " if policy else ""
    return f"""
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: default}}
spec:
  {{{extra}priority: {priority},
   containers: [{{name: c, image: i, resources: {{requests: {{cpu: "{cpu}"}}}}}}]}}
"""


async def _explain(*documents: str) -> Explanation:
    sim = SimCluster(clock=FakeClock())
    sim.load(ordered_for_loading(parse_documents("---".join(documents), "test").objects))
    registry = plugin_registry([])
    config, profiles = load_effective(registry)
    return await explain_in(sim, "default", "pending", config, profiles, registry)


def _priority_fixes(explanation: Explanation) -> list[Fix]:
    return [f for f in explanation.fixes if f.kind == "priority"]


def _spec(fix: Fix) -> Mapping[str, object]:
    spec = fix.patch["spec"]
    assert isinstance(spec, Mapping)
    return spec


async def test_the_lowest_priority_that_lets_preemption_help_is_proposed() -> None:
    explanation = await _explain(
        _node("node-a", "2"),
        _node("node-b", "2"),
        _pod("batch", "2", 0, node="node-a"),
        _pod("critical", "2", 1_000_000, node="node-b"),
        _pod("pending", "1", 0),
    )
    [fix] = _priority_fixes(explanation)
    # Outranking the batch pod on node-a is enough; the critical pod need not be outranked.
    assert _spec(fix) == {"priority": 1, "preemptionPolicy": "PreemptLowerPriority"}
    assert fix.nodes == ("node-a",)
    assert fix.summary == (
        "priority 1 lets preemption find room on node-a (of the nodes it examined): "
        "a PriorityClass of value ≥ 1 for the pod"
    )


async def test_the_search_passes_a_value_too_low_to_free_enough_room() -> None:
    # Evicting the priority-0 pod frees 1 of the 3 CPUs wanted; the priority-5 and -7 pods
    # must go too, while the priority-9 one may stay.
    explanation = await _explain(
        _node("only", "4"),
        _pod("p0", "1", 0, node="only"),
        _pod("p5", "1", 5, node="only"),
        _pod("p7", "1", 7, node="only"),
        _pod("p9", "1", 9, node="only"),
        _pod("pending", "3", 0),
    )
    [fix] = _priority_fixes(explanation)
    assert _spec(fix)["priority"] == 8
    assert fix.nodes == ("only",)


async def test_planner_runs_grow_with_the_logarithm_of_the_distinct_priorities(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[int] = []
    room = fixes._preemption_room

    def counted(pod: Pod, value: int, *rest: Any) -> tuple[str, ...]:
        asked.append(value)
        return room(pod, value, *rest)

    monkeypatch.setattr(fixes, "_preemption_room", counted)
    # Sixteen pods of distinct priorities fill the node; the pod needs twelve of them gone.
    pods = [_pod(f"p{i}", "1", i * 10, node="only") for i in range(16)]
    explanation = await _explain(_node("only", "16"), *pods, _pod("pending", "12", 0))
    [fix] = _priority_fixes(explanation)
    assert _spec(fix)["priority"] == 111
    assert len(asked) <= 5, asked
    assert 111 in asked


async def test_a_pod_that_may_not_preempt_is_told_to_change_its_policy() -> None:
    explanation = await _explain(
        _node("only", "2"),
        _pod("batch", "2", 0, node="only"),
        _pod("pending", "1", 0, policy="Never"),
    )
    [fix] = _priority_fixes(explanation)
    assert _spec(fix) == {"priority": 1, "preemptionPolicy": "PreemptLowerPriority"}
    assert fix.summary == (
        "priority 1 lets preemption find room on only (of the nodes it examined): a "
        "PriorityClass of value ≥ 1 and preemptionPolicy PreemptLowerPriority for the pod "
        "(its preemptionPolicy is Never now)"
    )


async def test_a_pod_that_outranks_enough_needs_only_the_policy_changed() -> None:
    explanation = await _explain(
        _node("only", "2"),
        _pod("batch", "2", 0, node="only"),
        _pod("pending", "1", 10, policy="Never"),
    )
    [fix] = _priority_fixes(explanation)
    assert _spec(fix) == {"priority": 10, "preemptionPolicy": "PreemptLowerPriority"}
    assert "preemptionPolicy PreemptLowerPriority" in fix.summary
    assert fix.nodes == ("only",)


async def test_no_priority_fix_when_preemption_already_helps_or_nothing_would() -> None:
    helps = await _explain(
        _node("only", "2"),
        _pod("batch", "2", 0, node="only"),
        _pod("pending", "1", 10),
    )
    assert any(r.candidates for r in helps.post_filter)
    assert _priority_fixes(helps) == []
    too_big = await _explain(
        _node("only", "2"),
        _pod("batch", "2", 0, node="only"),
        _pod("pending", "3", 0),
    )
    assert _priority_fixes(too_big) == []
