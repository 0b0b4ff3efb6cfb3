"""DataLocality: prefer the nodes nearest the pod's data, weighed by how much data is where."""

from __future__ import annotations

import numpy as np

from plugins.data_locality.args import DataLocalityArgs
from plugins.data_locality.nearness import nearness_scores
from plugins.data_locality.sites import LocationsError
from plugins.data_locality.sites import annotated_sites
from plugins.data_locality.sites import volume_sites
from plugins.helpers import NODE_NOT_FOUND_MESSAGE
from scheduler.framework import MIN_NODE_SCORE
from scheduler.framework import SUCCESS
from scheduler.framework import ClusterEventWithHint
from scheduler.framework import CycleState
from scheduler.framework import Handle
from scheduler.framework import NodeInfo
from scheduler.framework import NodeTable
from scheduler.framework import Pod
from scheduler.framework import Rows
from scheduler.framework import ScoreExtensions
from scheduler.framework import Scores
from scheduler.framework import Status

PRE_SCORE_STATE_KEY = "PreScoreDataLocality"


class DataLocality:
    name = "DataLocality"

    def __init__(self, args: DataLocalityArgs | None, handle: Handle) -> None:
        self._args = args if args is not None else DataLocalityArgs()
        self._handle = handle

    def pre_score(self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows) -> Status:
        try:
            sites = [*volume_sites(pod, self._handle), *annotated_sites(pod)]
        except LocationsError as exc:
            return Status.from_error(f"pod {pod.key}: {exc}")
        if not sites:
            # No data, or none whose place is known: every node is as near as any other.
            return Status.skip()
        scores = nearness_scores(table, sites, self._args.zone_credit, self._args.region_credit)
        state.write(PRE_SCORE_STATE_KEY, scores)
        return SUCCESS

    def _table_scores(self, state: CycleState) -> Scores | None:
        return state.get(PRE_SCORE_STATE_KEY, np.ndarray)

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        scores = self._table_scores(state)
        if scores is None:
            return MIN_NODE_SCORE, SUCCESS
        row = self._handle.node_table.row_of(node_info.name)
        if row is None or row >= len(scores):
            return 0, Status.from_error(NODE_NOT_FOUND_MESSAGE)
        return int(scores[row]), SUCCESS

    def score_nodes(self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows) -> Scores:
        scores = self._table_scores(state)
        if scores is None:
            return np.full(len(rows), MIN_NODE_SCORE, dtype=np.int64)
        picked: Scores = scores[rows]
        return picked

    def score_extensions(self) -> ScoreExtensions | None:
        return None

    def events_to_register(self) -> list[ClusterEventWithHint]:
        # A Score plugin never makes a pod unschedulable: no event can help a pod on its behalf.
        return []
