"""The PreFilter chain, as upstream's RunPreFilterPlugins runs it."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field
from typing import cast

from scheduler.framework import CycleState
from scheduler.framework import NodeTable
from scheduler.framework import Pod
from scheduler.framework import PreFilterResult
from scheduler.framework import Status
from scheduler.framework.status import Code
from scheduler.runtime.prefilter import PreFilterOutcome
from scheduler.runtime.prefilter import run_pre_filter
from scheduler.runtime.profile import Profile
from scheduler.testing import build_table
from scheduler.testing import make_node
from scheduler.testing import make_pod

Answer = tuple[PreFilterResult | None, Status]


@dataclass
class Answering:
    name: str
    answer: Answer
    called: bool = False

    def pre_filter(self, state: CycleState, pod: Pod, table: NodeTable) -> Answer:
        self.called = True
        return self.answer


@dataclass
class Chain:
    """The part of a Profile the chain reads."""

    pre_filter: list[Answering]
    observed: list[Code] = field(default_factory=list)

    def observe(self, point: str, status: Status, started: float) -> None:
        self.observed.append(status.code)

    def observe_plugin(
        self, state: CycleState, plugin: str, point: str, status: Status, started: float
    ) -> None:
        return


def _run(*plugins: Answering) -> PreFilterOutcome:
    table = build_table([make_node(n).obj() for n in ("a", "b", "c")], [])
    chain = Chain(list(plugins))
    return run_pre_filter(cast(Profile, chain), CycleState(), make_pod("p").obj(), table)


def _nodes(*names: str) -> PreFilterResult:
    return PreFilterResult(node_names=frozenset(names))


def test_the_last_unschedulable_plugin_is_the_one_reported_and_every_plugin_runs() -> None:
    first = Answering("First", (None, Status.unschedulable("first")))
    last = Answering("Last", (None, Status.unschedulable("last")))
    after = Answering("After", (None, Status()))
    outcome = _run(first, last, after)
    assert outcome.status == Status.unschedulable("last").with_plugin("Last")
    assert after.called


def test_pending_is_not_a_prefilter_answer_and_fails_the_attempt() -> None:
    outcome = _run(Answering("Waits", (None, Status(Code.PENDING, "later"))))
    assert outcome.status.code is Code.ERROR
    assert outcome.status.message() == 'running PreFilter plugin "Waits": later'


def test_disjoint_node_sets_name_the_narrowing_plugins_sorted_and_no_rejector() -> None:
    zeta = Answering("Zeta", (_nodes("a"), Status()))
    alpha = Answering("Alpha", (_nodes("b"), Status()))
    outcome = _run(zeta, alpha)
    assert outcome.status == Status(
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
        "node(s) didn't satisfy plugin(s) [Alpha Zeta] simultaneously",
    )
    assert outcome.narrowing_plugins == ["Zeta", "Alpha"]


def test_an_unresolvable_plugin_stops_the_chain_and_counts_no_narrowing() -> None:
    narrowing = Answering("Narrows", (_nodes("a", "b"), Status()))
    refusing = Answering("Refuses", (None, Status.unresolvable("never")))
    after = Answering("After", (None, Status()))
    outcome = _run(narrowing, refusing, after)
    assert outcome.status == Status.unresolvable("never").with_plugin("Refuses")
    assert outcome.narrowing_plugins == []
    assert not after.called
