"""The PostFilter chain, as upstream's RunPostFilterPlugins runs it, and its awaiting twin."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import cast

import pytest

from scheduler.framework import CycleState
from scheduler.framework import NodeStatusReader
from scheduler.framework import Pod
from scheduler.framework import PostFilterResult
from scheduler.framework import Status
from scheduler.framework.plugins import NominatingMode
from scheduler.framework.status import Code
from scheduler.runtime.postfilter import run_post_filter
from scheduler.runtime.postfilter import run_post_filter_awaiting
from scheduler.runtime.profile import Profile
from scheduler.testing import make_pod

Answer = tuple[PostFilterResult | None, Status]
NO_STATUSES = cast(NodeStatusReader, None)
NOOP = PostFilterResult("", NominatingMode.NOOP)


@dataclass
class Answering:
    name: str
    answer: Answer
    calls: list[str] = field(default_factory=list)

    def post_filter(self, state: CycleState, pod: Pod, statuses: Any) -> Answer:
        self.calls.append("post_filter")
        return self.answer


@dataclass
class AwaitingAnswering(Answering):
    async def post_filter_awaiting(self, state: CycleState, pod: Pod, statuses: Any) -> Answer:
        self.calls.append("post_filter_awaiting")
        return self.answer


@dataclass
class Chain:
    """The part of a Profile the chain reads: its PostFilter plugins, and where it reports."""

    post_filter: list[Answering]
    name: str = "default-scheduler"
    observed: list[tuple[str, Code]] = field(default_factory=list)

    def observe(self, point: str, status: Status, started: float) -> None:
        self.observed.append((point, status.code))

    def observe_duration(
        self, state: CycleState, plugin: str, point: str, status: Status, started: float
    ) -> None:
        return


def _run(*plugins: Answering) -> tuple[Answer, Chain]:
    chain = Chain(list(plugins))
    pod = make_pod("p").obj()
    return run_post_filter(cast(Profile, chain), CycleState(), pod, NO_STATUSES), chain


def test_rejections_are_joined_naming_the_first_rejector_and_the_last_nomination() -> None:
    first = Answering("First", (PostFilterResult("n1"), Status.unschedulable("a", "b")))
    noop = Answering("Noop", (NOOP, Status.unschedulable()))
    last = Answering("Last", (None, Status.unschedulable("c")))
    (result, status), chain = _run(first, noop, last)
    assert status == Status(Code.UNSCHEDULABLE, "a", "b", "c", plugin="First")
    # A result that leaves the nomination alone does not replace the one before it.
    assert result == PostFilterResult("n1")
    assert chain.observed == [("PostFilter", Code.UNSCHEDULABLE)]


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (Status(), Status(plugin="Decides")),
        (Status.unresolvable("never"), Status.unresolvable("never").with_plugin("Decides")),
        (Status.from_error("broke"), Status.from_error("broke").with_plugin("Decides")),
    ],
    ids=["success", "unresolvable", "error"],
)
def test_success_unresolvable_and_error_end_the_chain(status: Status, expected: Status) -> None:
    deciding = Answering("Decides", (NOOP, status))
    after = Answering("After", (None, Status.unschedulable("later")))
    (result, got), _ = _run(deciding, after)
    assert got == expected
    assert result == (None if status.code is Code.ERROR else NOOP)
    assert after.calls == []


async def test_the_awaiting_chain_awaits_the_plugins_that_can_be_awaited() -> None:
    plain = Answering("Plain", (None, Status.unschedulable("a")))
    awaiting = AwaitingAnswering("Awaiting", (PostFilterResult("n2"), Status()))
    chain = Chain([plain, awaiting])
    pod = make_pod("p").obj()
    result, status = await run_post_filter_awaiting(
        cast(Profile, chain), CycleState(), pod, NO_STATUSES
    )
    assert (result, status) == (PostFilterResult("n2"), Status(plugin="Awaiting"))
    assert plain.calls == ["post_filter"]
    assert awaiting.calls == ["post_filter_awaiting"]
