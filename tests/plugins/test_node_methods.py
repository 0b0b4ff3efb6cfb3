"""filter_on_node / score_on_node: the method gets the Node; a NodeInfo without one is an Error."""

from __future__ import annotations

from plugins.helpers import filter_on_node
from plugins.helpers import score_on_node
from scheduler.framework import SUCCESS
from scheduler.framework import Code
from scheduler.framework import CycleState
from scheduler.framework import FilterPlugin
from scheduler.framework import Node
from scheduler.framework import NodeInfo
from scheduler.framework import Pod
from scheduler.framework import ScorePlugin
from scheduler.framework import Status
from scheduler.framework.contract import contract_problems
from scheduler.testing import make_node
from scheduler.testing import make_pod

POD = make_pod("p").obj()


class NameLength:
    """Rejects nodes whose name is longer than `limit`, and scores the name's length."""

    name = "NameLength"

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.seen: list[Node] = []

    @filter_on_node
    def filter(self, state: CycleState, pod: Pod, node: Node) -> Status:
        """Filter doc."""
        self.seen.append(node)
        return SUCCESS if len(node.name) <= self.limit else Status.unschedulable("too long")

    @score_on_node
    def score(self, state: CycleState, pod: Pod, node: Node) -> tuple[int, Status]:
        self.seen.append(node)
        return len(node.name), SUCCESS

    def score_extensions(self) -> None:
        return None


def test_the_methods_receive_the_node_of_the_node_info() -> None:
    plugin = NameLength(limit=3)
    node = make_node("abcd").obj()
    status = plugin.filter(CycleState(), POD, NodeInfo(node))
    assert (status.code, status.reasons) == (Code.UNSCHEDULABLE, ("too long",))
    assert plugin.filter(CycleState(), POD, NodeInfo(make_node("ab").obj())).is_success
    assert plugin.score(CycleState(), POD, NodeInfo(node)) == (4, SUCCESS)
    assert plugin.seen[0] is node


def test_a_node_info_without_its_node_is_an_error_in_upstream_words() -> None:
    plugin = NameLength(limit=3)
    status = plugin.filter(CycleState(), POD, NodeInfo())
    assert (status.code, status.reasons) == (Code.ERROR, ("node not found",))
    score, status = plugin.score(CycleState(), POD, NodeInfo())
    assert (score, status.code, status.reasons) == (0, Code.ERROR, ("node not found",))
    assert plugin.seen == []


def test_decorated_methods_keep_their_names_and_meet_the_contract() -> None:
    assert NameLength.filter.__name__ == "filter"
    assert NameLength.filter.__doc__ == "Filter doc."
    assert contract_problems(NameLength, "Filter") == []
    assert contract_problems(NameLength, "Score") == []
    assert isinstance(NameLength(1), FilterPlugin)
    assert isinstance(NameLength(1), ScorePlugin)
