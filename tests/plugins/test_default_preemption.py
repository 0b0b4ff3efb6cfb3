"""DefaultPreemption's PostFilter: which node it picks, whom it spares, and what it says."""

from __future__ import annotations

import random

import pytest

from plugins.default_preemption import DefaultPreemptionArgs
from scheduler.framework import Code
from scheduler.framework import Node
from scheduler.framework import Pod
from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.plugins.default_preemption_world import World
from tests.plugins.default_preemption_world import pdb
from tests.plugins.default_preemption_world import preemptor
from tests.plugins.default_preemption_world import running
from tests.plugins.default_preemption_world import terminating


def nodes(*names: str, cpu: str = "2") -> list[Node]:
    return [make_node(n).capacity(cpu=cpu, memory="8Gi", pods="10").obj() for n in names]


# (pods already running on n1 and n2, the node preemption must choose)
CHOICES: dict[str, tuple[list[Pod], str]] = {
    "fewest-victims": (
        [
            running("a", "n1", cpu="1"),
            running("b", "n1", cpu="1"),
            running("c", "n2", cpu="2"),
        ],
        "n2",
    ),
    "lowest-highest-priority-beats-fewer-victims": (
        [
            running("a", "n1", cpu="2", priority=50),
            running("b", "n2", cpu="1", priority=10),
            running("c", "n2", cpu="1", priority=10),
        ],
        "n2",
    ),
    "smallest-priority-sum": (
        [
            running("a", "n1", cpu="1", priority=10),
            running("b", "n1", cpu="1", priority=10),
            running("c", "n2", cpu="1", priority=10),
            running("d", "n2", cpu="1", priority=5),
        ],
        "n2",
    ),
    "negative-priorities-do-not-make-more-victims-cheaper": (
        [
            running("a", "n1", cpu="1", priority=-10),
            running("b", "n1", cpu="1", priority=-10),
            running("c", "n2", cpu="2", priority=-10),
        ],
        "n2",
    ),
    # With the lowest possible priority a second victim adds nothing to the shifted sum.
    "fewest-victims-when-priority-sums-tie": (
        [
            running("a", "n1", cpu="1"),
            running("b", "n1", cpu="1", priority=-(2**31)),
            running("c", "n2", cpu="2"),
        ],
        "n2",
    ),
    "latest-start-of-highest-priority-victim": (
        [
            running("a", "n1", cpu="2", started="2025-01-01T00:00:00Z"),
            running("b", "n2", cpu="2", started="2025-06-01T00:00:00Z"),
        ],
        "n2",
    ),
    "only-the-node-whose-lower-priority-pods-make-room": (
        [
            running("a", "n1", cpu="1", priority=100),
            running("b", "n1", cpu="1"),
            running("c", "n2", cpu="1", priority=99),
            running("d", "n2", cpu="1", priority=99),
        ],
        "n2",
    ),
    "a-budget-violation-outweighs-priority": (
        [
            running("a", "n1", cpu="2", labels={"app": "db"}),
            running("b", "n2", cpu="2", priority=90),
        ],
        "n2",
    ),
}


@pytest.mark.parametrize("case", CHOICES, ids=str)
def test_picks_the_cheapest_node(case: str) -> None:
    pods, expected = CHOICES[case]
    world = World(nodes("n1", "n2"), pods, pdbs=[pdb("db", allowed=0, app="db")])
    assert world.nominated_node(preemptor()) == expected


def test_the_choice_does_not_depend_on_node_order() -> None:
    pods = [
        running("a", "n1", cpu="1"),
        running("b", "n1", cpu="1"),
        running("c", "n2", cpu="2"),
    ]
    for seed in range(6):
        world = World(nodes("n1", "n2"), pods, seed=seed)
        assert world.nominated_node(preemptor()) == "n2"


def test_violates_a_budget_when_no_other_node_would_do() -> None:
    world = World(
        nodes("n1"),
        [running("a", "n1", cpu="2", labels={"app": "db"})],
        pdbs=[pdb("db", allowed=0, app="db")],
    )
    assert world.nominated_node(preemptor()) == "n1"


@pytest.mark.parametrize("victim_priority", [100, 200], ids=["equal", "higher"])
def test_never_preempts_equal_or_higher_priority(victim_priority: int) -> None:
    world = World(nodes("n1"), [running("a", "n1", cpu="2", priority=victim_priority)])
    result, status = world.preempt(preemptor(priority=100))
    assert status.code is Code.UNSCHEDULABLE
    assert status.message() == (
        "preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod."
    )
    # A failed preemption clears any earlier nomination.
    assert result is not None
    assert result.nominated_node_name == ""


def test_a_node_where_removing_every_lower_priority_pod_is_not_enough_reports_the_filter() -> None:
    world = World(
        nodes("n1", "n2"),
        [
            running("a", "n1", cpu="1", priority=100),
            running("b", "n1", cpu="1"),
            running("c", "n2", cpu="2", priority=500),
        ],
    )
    _, status = world.preempt(preemptor())
    assert status.message() == (
        "preemption: 0/2 nodes are available: 1 Insufficient cpu, "
        "1 No preemption victims found for incoming pod."
    )


def test_preemption_policy_never_is_not_eligible() -> None:
    world = World(nodes("n1"), [running("a", "n1", cpu="2")])
    pod = make_pod("vip").req(cpu="2").priority(100).preemption_policy("Never").obj()
    result, status = world.preempt(pod)
    assert result is None
    assert status.code is Code.UNSCHEDULABLE
    assert status.message() == "preemption: not eligible due to preemptionPolicy=Never."


def nominated_preemptor(node: str) -> Pod:
    return make_pod("vip").req(cpu="2").priority(100).nominated(node).obj()


def test_waits_while_its_victims_on_the_nominated_node_terminate() -> None:
    # n2 would be a fine candidate, but the pod already preempted on n1.
    world = World(
        nodes("n1", "n2"),
        [terminating(running("a", "n1", cpu="2")), running("b", "n2", cpu="2")],
    )
    result, status = world.preempt(nominated_preemptor("n1"))
    assert result is None
    assert status.message() == (
        "preemption: not eligible due to a terminating pod on the nominated node."
    )
    assert not world.handle.background


@pytest.mark.parametrize(
    ("victim", "nominated_node_cordoned"),
    [
        pytest.param(
            terminating(running("a", "n1", cpu="2"), by_preemption=False),
            False,
            id="deleted-not-preempted",
        ),
        pytest.param(
            terminating(running("a", "n1", cpu="2", priority=100)), False, id="not-lower-priority"
        ),
        pytest.param(
            terminating(running("a", "n1", cpu="2")), True, id="nominated-node-unresolvable"
        ),
    ],
)
def test_terminating_pods_that_do_not_block_another_preemption(
    victim: Pod, nominated_node_cordoned: bool
) -> None:
    n1 = make_node("n1").capacity(cpu="2", memory="8Gi", pods="10")
    if nominated_node_cordoned:
        n1 = n1.unschedulable()
    world = World([n1.obj(), *nodes("n2")], [victim, running("b", "n2", cpu="2")])
    assert world.nominated_node(nominated_preemptor("n1")) == "n2"


def test_unresolvable_nodes_are_never_candidates() -> None:
    # n1 would be cheaper (one victim), but it is cordoned: removing pods cannot help there.
    cordoned = make_node("n1").capacity(cpu="2", memory="8Gi", pods="10").unschedulable().obj()
    world = World(
        [cordoned, *nodes("n2")],
        [
            running("a", "n1", cpu="2"),
            running("b", "n2", cpu="1"),
            running("c", "n2", cpu="1"),
        ],
    )
    assert world.nominated_node(preemptor()) == "n2"


def test_no_node_where_preemption_helps() -> None:
    cordoned = make_node("n1").capacity(cpu="2", memory="8Gi", pods="10").unschedulable().obj()
    world = World([cordoned], [running("a", "n1", cpu="2")])
    result, status = world.preempt(preemptor())
    assert status.code is Code.UNSCHEDULABLE
    assert status.message() == (
        "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling."
    )
    assert result is not None
    assert result.nominated_node_name == ""


def test_message_counts_untried_nodes_as_not_helpful_and_sorts_entries_as_strings() -> None:
    cordoned = [
        make_node(f"c{i}").capacity(cpu="2", memory="8Gi", pods="10").unschedulable().obj()
        for i in range(10)
    ]
    world = World(
        [*cordoned, *nodes("n1", "n2")],
        [running("a", "n1", cpu="2", priority=100), running("b", "n2", cpu="2", priority=100)],
    )
    _, status = world.preempt(preemptor())
    assert status.message() == (
        "preemption: 0/12 nodes are available: 10 Preemption is not helpful for scheduling, "
        "2 No preemption victims found for incoming pod."
    )


def test_core_failure_text_with_the_post_filter_message_appended() -> None:
    """The cycle's FitError text followed by the plugin's (how the core assembles them)."""
    world = World(
        nodes("n1", "n2", "n3"),
        [running(f"p{i}", f"n{i}", cpu="2", priority=100) for i in (1, 2, 3)],
    )
    _, status = world.preempt(preemptor())
    fit_error = "0/3 nodes are available: 3 Insufficient cpu."
    assert f"{fit_error} {status.message()}" == (
        "0/3 nodes are available: 3 Insufficient cpu. preemption: 0/3 nodes are available: "
        "3 No preemption victims found for incoming pod."
    )


def identical_nodes(count: int) -> tuple[list[Node], list[Pod]]:
    names = [f"n{i}" for i in range(count)]
    return nodes(*names), [running(f"p{i}", n, cpu="2") for i, n in enumerate(names)]


@pytest.mark.parametrize("seed", range(5))
def test_dry_run_starts_at_a_random_offset_and_stops_at_the_wanted_count(seed: int) -> None:
    """With one candidate wanted, the first node tried from the rng's offset is taken."""
    node_list, pods = identical_nodes(5)
    # The cheapest node is n4; a dry run that tried every node would always pick it.
    pods[4] = running("p4", "n4", cpu="2", priority=-5)
    args = DefaultPreemptionArgs(min_candidate_nodes_percentage=0, min_candidate_nodes_absolute=1)
    world = World(node_list, pods, args=args, seed=seed)
    expected_offset = random.Random(seed).randrange(5)
    assert world.nominated_node(preemptor()) == f"n{expected_offset}"


@pytest.mark.parametrize("seed", range(5))
def test_with_default_args_every_node_is_tried(seed: int) -> None:
    node_list, pods = identical_nodes(5)
    pods[4] = running("p4", "n4", cpu="2", priority=-5)
    world = World(node_list, pods, seed=seed)
    assert world.nominated_node(preemptor()) == "n4"
