"""Victim selection on one node: reprieve order, PodDisruptionBudgets, and the dry run's copies."""

from __future__ import annotations

from datetime import UTC
from datetime import datetime
from typing import Any

import pytest

from plugins.helpers.preemption.disruption_budgets import DisruptionBudget
from plugins.helpers.preemption.disruption_budgets import split_by_violation
from plugins.helpers.preemption.importance import reprieve_order
from plugins.helpers.preemption.victims import NO_VICTIMS_FOUND
from plugins.helpers.preemption.victims import DryRunNode
from plugins.helpers.preemption.victims import select_victims
from scheduler.framework import Code
from scheduler.framework import CycleState
from scheduler.framework import Pod
from scheduler.framework import Victims
from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.plugins.default_preemption_world import World
from tests.plugins.default_preemption_world import pdb
from tests.plugins.default_preemption_world import preemptor
from tests.plugins.default_preemption_world import running

NOW = datetime(2026, 1, 1, tzinfo=UTC)
HOST = "kubernetes.io/hostname"


def node(name: str = "n1", cpu: str = "4") -> Any:
    return make_node(name).capacity(cpu=cpu, memory="8Gi", pods="10").obj()


def victims_on(world: World, pod: Pod, name: str = "n1") -> Victims:
    state = CycleState()
    world.statuses(state, pod)
    info = world.handle.node_info(name)
    assert info is not None
    budgets = [
        DisruptionBudget.from_dict(raw)
        for raw in world.handle.lister("poddisruptionbudgets").list()
    ]
    outcome = select_victims(DryRunNode(world.handle, state, pod, info.clone()), budgets, NOW)
    assert isinstance(outcome, Victims), outcome
    return outcome


def names(pods: Any) -> list[str]:
    return [p.name for p in pods]


def test_reprieves_the_most_important_pods_that_still_leave_room() -> None:
    # 4 cpu, the preemptor needs 2. Put back b (5), then c (1) no longer fits, then a (0) does.
    world = World(
        [node()],
        [
            running("a", "n1", cpu="1", priority=0),
            running("b", "n1", cpu="1", priority=5),
            running("c", "n1", cpu="2", priority=1),
        ],
    )
    victims = victims_on(world, preemptor())
    assert names(victims.pods) == ["c"]
    assert victims.num_pdb_violations == 0


def test_equal_pods_not_started_are_reprieved_last_added_first_as_upstream_sorts_them() -> None:
    # 2 cpu; the preemptor needs 1500m. Either victim alone makes room. Upstream's comparison
    # gives each unstarted pod "now" at every call, so its sort reverses node order: b is put
    # back first and a is the victim.
    world = World(
        [node(cpu="2")],
        [running("a", "n1", cpu="250m", priority=5), running("b", "n1", cpu="500m", priority=5)],
    )
    victims = victims_on(world, preemptor(cpu="1500m"))
    assert names(victims.pods) == ["a"]


def test_victims_of_one_group_stay_in_reprieve_order() -> None:
    # Neither pod can be put back; unstarted and of equal priority, upstream reprieves them in
    # reverse node order and, with no budget involved, reports them in that order.
    world = World(
        [node(cpu="2")],
        [running("a", "n1", cpu="1", priority=5), running("b", "n1", cpu="1", priority=5)],
    )
    assert names(victims_on(world, preemptor(cpu="2")).pods) == ["b", "a"]


def test_victims_of_both_groups_are_sorted_again_as_the_reprieve_order_is() -> None:
    world = World(
        [node(cpu="3")],
        [
            running("a", "n1", cpu="1", priority=5),
            running("guarded", "n1", cpu="1", priority=1, labels={"app": "db"}),
            running("b", "n1", cpu="1", priority=5),
        ],
        pdbs=[pdb("db", allowed=0, app="db")],
    )
    # Reprieved: guarded (its budget first), then b before a; none can stay. Sorted again with
    # the same comparison, which calls every unstarted pod more important than the one before
    # it, the equal pair turns back to node order.
    victims = victims_on(world, preemptor(cpu="3"))
    assert names(victims.pods) == ["a", "b", "guarded"]
    assert victims.num_pdb_violations == 1


def test_reprieve_order_follows_priority_then_start_then_reversed_node_order() -> None:
    pods = [
        running("unstarted-1", "n1", cpu="1"),
        running("late", "n1", cpu="1", started="2025-12-31T12:00:00Z"),
        running("unstarted-2", "n1", cpu="1"),
        running("early", "n1", cpu="1", started="2025-12-30T12:00:00Z"),
        running("high", "n1", cpu="1", priority=9),
    ]
    assert names(reprieve_order(pods, NOW)) == [
        "high",
        "early",
        "late",
        "unstarted-2",
        "unstarted-1",
    ]


def unstarted(count: int) -> list[Pod]:
    return [running(f"p{i}", "n1", cpu="100m") for i in range(1, count + 1)]


def test_past_twelve_tied_pods_are_reprieved_in_the_order_go_sort_slice_gives() -> None:
    # Recorded from Go's sort.Slice with MoreImportantPod over 13 unstarted pods of one
    # priority: no longer the insertion sort's reversed node order.
    expected = "p12 p11 p10 p9 p8 p1 p6 p5 p4 p3 p2 p13 p7"
    assert names(reprieve_order(unstarted(13), NOW)) == expected.split()


@pytest.mark.parametrize(
    ("count", "expected"),
    [(12, ["p3", "p2", "p1"]), (13, ["p2", "p13", "p7"]), (16, ["p6", "p1", "p9"])],
)
def test_victims_among_many_tied_pods_are_the_ones_upstream_takes(
    count: int, expected: list[str]
) -> None:
    # A node full of 100m pods; the preemptor needs 300m, so the last three reprieved go.
    full = make_node("n1").capacity(cpu=f"{count * 100}m", memory="8Gi", pods="110").obj()
    world = World([full], unstarted(count))
    assert names(victims_on(world, preemptor(cpu="300m")).pods) == expected


def test_between_equal_priorities_the_older_pod_is_reprieved() -> None:
    world = World(
        [node(cpu="2")],
        [
            running("young", "n1", cpu="1", started="2025-06-01T00:00:00Z"),
            running("old", "n1", cpu="1", started="2025-01-01T00:00:00Z"),
        ],
    )
    assert names(victims_on(world, preemptor(cpu="1")).pods) == ["young"]


def test_budget_protected_pods_are_reprieved_first() -> None:
    # By priority alone w (20) would be kept and v (10) preempted; v's budget allows nothing.
    world = World(
        [node(cpu="2")],
        [
            running("v", "n1", cpu="1", priority=10, labels={"app": "db"}),
            running("w", "n1", cpu="1", priority=20),
        ],
        pdbs=[pdb("db", allowed=0, app="db")],
    )
    victims = victims_on(world, preemptor(cpu="1"))
    assert names(victims.pods) == ["w"]
    assert victims.num_pdb_violations == 0


def test_counts_the_victims_that_break_a_budget() -> None:
    world = World(
        [node(cpu="2")],
        [
            running("x", "n1", cpu="1", priority=10, labels={"app": "db"}),
            running("y", "n1", cpu="1", priority=5, labels={"app": "db"}),
        ],
        pdbs=[pdb("db", allowed=1, app="db")],
    )
    victims = victims_on(world, preemptor(cpu="2"))
    # Most important first; the budget pays for one of the two disruptions.
    assert names(victims.pods) == ["x", "y"]
    assert victims.num_pdb_violations == 1


def test_no_lower_priority_pod_means_no_victims() -> None:
    world = World([node()], [running("a", "n1", cpu="4", priority=100)])
    pod = preemptor()
    state = CycleState()
    world.statuses(state, pod)
    info = world.handle.node_info("n1")
    assert info is not None
    outcome = select_victims(DryRunNode(world.handle, state, pod, info.clone()), [], NOW)
    assert not isinstance(outcome, Victims)
    assert outcome.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert outcome.message() == NO_VICTIMS_FOUND


def test_the_dry_run_never_touches_the_live_node_or_the_cycle_state() -> None:
    pods = [running("a", "n1", cpu="2"), running("b", "n1", cpu="2")]
    world = World([node()], pods)
    info = world.handle.node_info("n1")
    assert info is not None
    before = (dict(info.pods), dict(info.requested), info.generation)
    state = CycleState()
    pod = preemptor()
    statuses = world.statuses(state, pod)
    keys_before = sorted(state._data)
    _, status = world.plugin.post_filter(state, pod, statuses)
    assert status.is_success
    assert (dict(info.pods), dict(info.requested), info.generation) == before
    assert sorted(state._data) == keys_before


def test_removing_a_victim_updates_pre_filter_state_through_the_extensions() -> None:
    # The preemptor refuses to share a host with app=web; only preempting w makes room.
    world = World(
        [node()],
        [running("w", "n1", cpu="100m", labels={"app": "web"}), running("other", "n1", cpu="100m")],
        affinity=True,
    )
    pod = (
        make_pod("vip")
        .req(cpu="100m")
        .priority(100)
        .pod_affinity("required", HOST, {"app": "web"}, anti=True)
        .obj()
    )
    assert names(victims_on(world, pod).pods) == ["w"]


def covered(pod: Pod, *budgets: dict[str, Any]) -> bool:
    violating, _ = split_by_violation([pod], [DisruptionBudget.from_dict(b) for b in budgets])
    return bool(violating)


def budget(**overrides: Any) -> dict[str, Any]:
    raw = pdb("db", allowed=0, app="db")
    for key, value in overrides.items():
        section, field = key.split("__")
        raw[section][field] = value
    return raw


DB = running("d", "n1", cpu="1", labels={"app": "db"})
ABSENT_APP = {"matchExpressions": [{"key": "app", "operator": "DoesNotExist"}]}


@pytest.mark.parametrize(
    ("pod", "raw", "violates"),
    [
        pytest.param(DB, budget(), True, id="matching-budget-with-no-allowance"),
        pytest.param(DB, budget(status__disruptionsAllowed=1), False, id="allowance-left"),
        pytest.param(
            DB,
            budget(status__disruptedPods={"d": "2026-01-01T00:00:00Z"}),
            False,
            id="already-disrupted",
        ),
        pytest.param(DB, budget(metadata__namespace="other"), False, id="other-namespace"),
        pytest.param(DB, budget(spec__selector={}), False, id="empty-selector-selects-nothing"),
        pytest.param(DB, budget(spec__selector=None), False, id="no-selector"),
        pytest.param(
            DB,
            budget(spec__selector={"matchExpressions": [{"key": "app", "operator": "Bogus"}]}),
            False,
            id="invalid-selector-is-skipped",
        ),
        pytest.param(
            running("bare", "n1", cpu="1"), budget(spec__selector=ABSENT_APP), False, id="no-labels"
        ),
        pytest.param(
            running("t", "n1", cpu="1", labels={"tier": "x"}),
            budget(spec__selector=ABSENT_APP),
            True,
            id="same-selector-with-labels",
        ),
    ],
)
def test_which_pods_violate_a_budget(pod: Pod, raw: dict[str, Any], violates: bool) -> None:
    assert covered(pod, raw) is violates


def test_each_covered_pod_spends_one_allowed_disruption_in_order() -> None:
    pods = [running(n, "n1", cpu="1", labels={"app": "db"}) for n in ("p1", "p2", "p3")]
    violating, non_violating = split_by_violation(
        pods, [DisruptionBudget.from_dict(pdb("db", allowed=2, app="db"))]
    )
    assert names(non_violating) == ["p1", "p2"]
    assert names(violating) == ["p3"]


def test_importance_is_priority_then_earliest_start_and_unstarted_counts_as_now() -> None:
    pods = [
        running("low", "n1", cpu="1", priority=1, started="2020-01-01T00:00:00Z"),
        running("unstarted", "n1", cpu="1", priority=5),
        running("late", "n1", cpu="1", priority=5, started="2025-12-31T00:00:00Z"),
        running("early", "n1", cpu="1", priority=5, started="2025-01-01T00:00:00Z"),
    ]
    assert names(reprieve_order(pods, NOW)) == ["early", "late", "unstarted", "low"]
