"""PodCountExtensions and pre_score_state: PreFilter and PreScore state helpers plugins share."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from plugins.helpers.pod_count_extensions import PodCountExtensions
from plugins.helpers.score_state import pre_score_state
from scheduler.framework import SUCCESS
from scheduler.framework import CycleState
from scheduler.framework import NodeInfo
from scheduler.framework import Pod
from scheduler.framework import Status
from scheduler.testing import make_node
from scheduler.testing import make_pod


class Counting(PodCountExtensions):
    def __init__(self) -> None:
        self.calls: list[tuple[str, str, int]] = []

    def _count_pod(self, state: CycleState, other: Pod, node_info: NodeInfo, delta: int) -> Status:
        self.calls.append((other.name, node_info.name, delta))
        return SUCCESS


def test_add_and_remove_count_the_other_pod_once_more_and_once_less() -> None:
    plugin = Counting()
    assert plugin.pre_filter_extensions() is plugin
    incoming = make_pod("incoming").obj()
    victim = make_pod("victim").obj()
    info = NodeInfo(make_node("n1").obj())
    state = CycleState()
    assert plugin.add_pod(state, incoming, victim, info).is_success
    assert plugin.remove_pod(state, incoming, victim, info).is_success
    assert plugin.calls == [("victim", "n1", 1), ("victim", "n1", -1)]


def test_a_count_update_must_be_written() -> None:
    with pytest.raises(TypeError):
        PodCountExtensions()  # type: ignore[abstract]


@dataclass
class Written:
    value: int


def test_pre_score_state_is_what_pre_score_wrote() -> None:
    state = CycleState()
    state.write("PreScoreExample", Written(3))
    assert pre_score_state(state, "PreScoreExample", Written) == Written(3)


def test_a_missing_pre_score_state_is_raised_naming_its_key() -> None:
    with pytest.raises(LookupError, match=r"^PreScoreExample missing: PreScore did not run$"):
        pre_score_state(CycleState(), "PreScoreExample", Written)
