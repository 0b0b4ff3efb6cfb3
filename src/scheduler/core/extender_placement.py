"""A scheduling attempt that consults HTTP extenders: Filter, then the extenders' filters on
the feasible nodes, then Score plus the extenders' prioritize scores; or, when nothing fits,
PostFilter awaited, so that preemption may ask the extenders with a preempt verb.

The extenders are awaited in the middle of the attempt. The caller holds the informers'
handlers meanwhile (`Informer.hold`), so the cache and the node table stand still as
upstream's snapshot does, and rows found before an await still name the same nodes after it.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

import numpy as np

from scheduler.core.outcome import BatchTurn
from scheduler.core.outcome import Failure
from scheduler.core.outcome import Placement
from scheduler.core.placement_search import Feasible
from scheduler.core.placement_search import PlacementSearch
from scheduler.core.placement_search import Unfit
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.events import EXTENDER_REJECTOR
from scheduler.framework.node_table import NodeTable
from scheduler.framework.status import Status
from scheduler.objects.pod import Pod
from scheduler.observability import get_logger
from scheduler.runtime.extenders import ExtenderCallError
from scheduler.runtime.extenders import ExtenderChain
from scheduler.runtime.framework import Framework

_log = get_logger("scheduler")


async def find_placement_with_extenders(
    framework: Framework,
    state: CycleState,
    pod: Pod,
    table: NodeTable,
    nominations: Mapping[str, Sequence[Pod]],
    extenders: ExtenderChain,
    batch: BatchTurn | None = None,
) -> Placement | Failure:
    search = PlacementSearch(framework, state, pod, table, nominations, batch)
    try:
        found = await _feasible_after_extenders(search, extenders)
        if isinstance(found, Unfit):
            return await search.post_filter_awaiting(found)
        if isinstance(found, Failure):
            return found
        totals = search.decided_or_scored(found)
        if isinstance(totals, Unfit):
            return await search.post_filter_awaiting(totals)
        if not isinstance(totals, np.ndarray):
            return totals
        scores = await extenders.prioritize(pod, _nodes(table, found.rows))
    except ExtenderCallError as exc:
        # An extender that may not be ignored failed: the attempt fails as an error, in the
        # extender's own words, and the pod is retried after backoff.
        return Failure(Status.from_error(str(exc)), str(exc))
    if scores:
        totals = totals + np.array(
            [scores.get(table.names[int(row)], 0) for row in found.rows], dtype=np.int64
        )
    return search.select(found.rows, totals)


async def _feasible_after_extenders(
    search: PlacementSearch, extenders: ExtenderChain
) -> Feasible | Failure | Unfit:
    pod, table = search.pod, search.table
    found = search.feasible()
    if not isinstance(found, Feasible):
        return found
    if found.nominated_only:
        kept = await _filter_nominated(extenders, pod, table, found)
        if kept is not None and len(kept.rows):
            return kept
        # Upstream tries the nominated node alone first and, when it does not pass every
        # filter (the extenders' included), evaluates all nodes.
        found = search.feasible(try_nominated=False)
        if not isinstance(found, Feasible):
            return found
    return await _filter(extenders, pod, table, found)


async def _filter_nominated(
    extenders: ExtenderChain, pod: Pod, table: NodeTable, found: Feasible
) -> Feasible | None:
    """The nominated node through the extenders' filters; an extender's failure there is only
    logged, as upstream's evaluateNominatedNode logs it, and the search over every node
    decides."""
    try:
        return await _filter(extenders, pod, table, found)
    except ExtenderCallError as exc:
        _log.error(
            "Evaluation failed on nominated node",
            pod=pod.key,
            node=pod.nominated_node_name,
            err=str(exc),
        )
        return None


async def _filter(
    extenders: ExtenderChain, pod: Pod, table: NodeTable, found: Feasible
) -> Feasible:
    """The rows the extenders' filters keep; the nodes they name get their statuses in the
    diagnosis, so the FitError counts their reasons as upstream's does."""
    if not len(found.rows):
        return found
    outcome = await extenders.filter(pod, _nodes(table, found.rows))
    diagnosis = found.diagnosis
    for name, status in outcome.statuses.items():
        row = table.row_of(name)
        if row is not None:
            diagnosis.reject_row(row, status.with_plugin(EXTENDER_REJECTOR))
    kept = {table.row_of(name) for name in outcome.node_names}
    rows = np.array([r for r in found.rows.tolist() if r in kept], dtype=np.int64)
    if len(rows) != len(found.rows):
        diagnosis.unschedulable_plugins.add(EXTENDER_REJECTOR)
    return Feasible(rows, diagnosis, found.nominated_only)


def _nodes(table: NodeTable, rows: np.ndarray) -> list[Mapping[str, Any]]:
    nodes = []
    for row in rows.tolist():
        node = table.node_infos[row].node
        if node is not None:
            nodes.append(node.raw)
    return nodes
