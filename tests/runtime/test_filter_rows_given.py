"""The rows the Filter pass hands batch forms: every row in one go is the table's own
`all_rows()`, so that plugins read column views instead of gathering every column."""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from scheduler.framework.batch import FilterBatch
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.diagnosis import Diagnosis
from scheduler.framework.node_info import NodeInfo
from scheduler.framework.node_table import NodeTable
from scheduler.framework.plugins import Rows
from scheduler.framework.status import Status
from scheduler.objects.pod import Pod
from scheduler.runtime.filtering import FilterRun
from scheduler.runtime.profile import FilterEntry
from scheduler.runtime.profile import Profile
from scheduler.testing import build_table
from scheduler.testing import make_node
from scheduler.testing import make_pod


class _RowsSeen:
    """Passes every node; notes whether each batch was the whole table's own rows."""

    name = "RowsSeen"

    def __init__(self) -> None:
        self.covered: list[bool] = []

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return Status()

    def filter_nodes(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows
    ) -> FilterBatch:
        self.covered.append(table.covers(rows))
        return FilterBatch.all_pass(len(rows))


class _Profile:
    """What the Filter pass reads of a profile."""

    vectorized = True

    def __init__(self, plugin: _RowsSeen, percentage: int | None) -> None:
        self.filter = [FilterEntry(plugin, plugin)]
        self.score = [plugin]
        self.percentage_of_nodes_to_score = percentage

    def observe(self, *args: object) -> None:
        pass

    def observe_plugin(self, *args: object, **kwargs: object) -> None:
        pass

    def observed_point(self, point: str, run: Callable[[], Rows]) -> Rows:
        return run()


def _feasible(percentage: int | None) -> tuple[NodeTable, Rows, list[bool]]:
    table = build_table(make_node(f"n{i}").capacity(cpu="1", pods="5").obj() for i in range(300))
    plugin = _RowsSeen()
    profile = cast(Profile, _Profile(plugin, percentage))
    pod = make_pod("p").obj()
    rows = FilterRun().find_feasible(profile, CycleState(), pod, table, None, Diagnosis(table), {})
    return table, rows, plugin.covered


def test_filtering_every_node_hands_plugins_the_tables_own_rows() -> None:
    table, feasible, covered = _feasible(None)
    assert covered == [True]
    # Nothing failed: scoring is handed the same rows, still recognisable.
    assert table.covers(feasible)


def test_filtering_part_of_the_nodes_still_finds_what_it_wants() -> None:
    _, feasible, covered = _feasible(50)
    assert len(feasible) == 150
    assert covered and not any(covered)
