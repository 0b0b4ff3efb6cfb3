"""The dry run: on which nodes could preemption make room, and at what cost.

Nodes are tried from a random offset so that repeated preemptions do not always pick victims
from the same nodes. The search stops once it holds enough candidates, at least one of which
breaks no PodDisruptionBudget.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from datetime import datetime

from plugins.helpers.preemption.disruption_budgets import DisruptionBudget
from plugins.helpers.preemption.victims import DryRunNode
from scheduler.framework import Code
from scheduler.framework import CycleState
from scheduler.framework import Handle
from scheduler.framework import Pod
from scheduler.framework import Status
from scheduler.framework import Victims

# Chooses the victims on one node, given a copy of the node and of the cycle state, the budgets
# and the time (upstream's SelectVictimsOnNode); a Status says why the node is no use.
VictimSelector = Callable[[DryRunNode, Sequence[DisruptionBudget], datetime], Victims | Status]


@dataclass(frozen=True, slots=True)
class Candidate:
    """A node the preemptor would fit on once `victims` are gone."""

    node_name: str
    victims: Victims


@dataclass(slots=True)
class DryRunResult:
    """Candidates (budget-respecting ones first) and why the other tried nodes are no use."""

    candidates: list[Candidate] = field(default_factory=list)
    statuses: dict[str, Status] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)


def dry_run(
    handle: Handle,
    select: VictimSelector,
    state: CycleState,
    pod: Pod,
    potential_nodes: Sequence[str],
    budgets: Sequence[DisruptionBudget],
    offset: int,
    wanted: int,
    now: datetime,
) -> DryRunResult:
    """Select victims on `potential_nodes`, starting at `offset` and wrapping around, until
    `wanted` candidates are found with at least one that violates no budget.

    Each node is tried on a copy of its NodeInfo and of the cycle state; the live ones are
    never touched. Upstream keeps at most `wanted` candidates of each kind.
    """
    result = DryRunResult()
    non_violating: list[Candidate] = []
    violating: list[Candidate] = []
    total = len(potential_nodes)
    for i in range(total):
        name = potential_nodes[(offset + i) % total]
        live = handle.node_info(name)
        if live is None:
            continue
        outcome = select(DryRunNode(handle, state.clone(), pod, live.clone()), budgets, now)
        if isinstance(outcome, Victims) and outcome.pods:
            found = non_violating if outcome.num_pdb_violations == 0 else violating
            if len(found) < wanted:
                found.append(Candidate(name, outcome))
            if non_violating and len(non_violating) + len(violating) >= wanted:
                break
            continue
        status = (
            outcome
            if isinstance(outcome, Status)
            else Status.from_error(f'expected at least one victim pod on node "{name}"')
        )
        if status.code is Code.ERROR:
            result.errors.append(status.message())
        result.statuses[name] = status
    result.candidates = [*non_violating, *violating]
    return result
