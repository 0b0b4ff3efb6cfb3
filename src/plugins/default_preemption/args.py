"""DefaultPreemptionArgs (kubescheduler.config.k8s.io/v1) with upstream defaults and validation."""

from __future__ import annotations

from typing import Final
from typing import Self

from pydantic import model_validator

from scheduler.framework import FieldErrors
from scheduler.framework import Int32
from scheduler.framework import PluginArgs

DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE: Final = 10
DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE: Final = 100


class DefaultPreemptionArgs(PluginArgs):
    """How many nodes the preemption dry run must turn into candidates before it stops.

    The dry run wants at least `percentage` % of the nodes where preemption might help, and
    never fewer than `absolute` of them (capped at the number of such nodes).
    """

    min_candidate_nodes_percentage: Int32 = DEFAULT_MIN_CANDIDATE_NODES_PERCENTAGE
    min_candidate_nodes_absolute: Int32 = DEFAULT_MIN_CANDIDATE_NODES_ABSOLUTE

    @model_validator(mode="after")
    def _validate(self) -> Self:
        errors = FieldErrors()
        percentage = self.min_candidate_nodes_percentage
        absolute = self.min_candidate_nodes_absolute
        if not 0 <= percentage <= 100:
            errors.invalid(
                ("minCandidateNodesPercentage",), percentage, "not in valid range [0, 100]"
            )
        if absolute < 0:
            errors.invalid(("minCandidateNodesAbsolute",), absolute, "not in valid range [0, inf)")
        if percentage == 0 and absolute == 0:
            errors.invalid(
                ("minCandidateNodesPercentage",),
                percentage,
                "cannot be zero at the same time as minCandidateNodesAbsolute",
            )
            errors.invalid(
                ("minCandidateNodesAbsolute",),
                absolute,
                "cannot be zero at the same time as minCandidateNodesPercentage",
            )
        errors.raise_if_any(type(self).__name__)
        return self


def num_candidates(args: DefaultPreemptionArgs, num_nodes: int) -> int:
    """Candidates the dry run must find among `num_nodes` potential nodes (upstream's
    calculateNumCandidates): the percentage, raised to the absolute floor, capped at the total."""
    wanted = num_nodes * args.min_candidate_nodes_percentage // 100
    wanted = max(wanted, args.min_candidate_nodes_absolute)
    return min(wanted, num_nodes)
