"""The texts preemption reports, in upstream's words."""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence

from scheduler.framework import Status
from scheduler.framework.diagnosis import fit_error_text

MESSAGE_PREFIX = "preemption: "
NOT_ELIGIBLE_POLICY_NEVER = "not eligible due to preemptionPolicy=Never."
NOT_ELIGIBLE_TERMINATING = "not eligible due to a terminating pod on the nominated node."
NOT_HELPFUL = "Preemption is not helpful for scheduling"
NO_CANDIDATE = "no candidate node for preemption"
WAITING_FOR_PREEMPTION = "waiting for the preemption for this pod to be finished"


def with_prefix(status: Status) -> Status:
    """Every non-empty message the plugin returns starts with "preemption: "."""
    message = status.message()
    if not message:
        return status
    return Status(status.code, MESSAGE_PREFIX + message)


def no_candidates_message(num_all_nodes: int, statuses: Mapping[str, Status]) -> str:
    """The FitError text over the dry run's outcome: each tried node contributes its reasons,
    and every node not tried counts as "Preemption is not helpful for scheduling"."""
    counts: dict[str, int] = {}
    for status in statuses.values():
        for reason in status.all_reasons():
            counts[reason] = counts.get(reason, 0) + 1
    absent = num_all_nodes - len(statuses)
    if absent > 0:
        counts[NOT_HELPFUL] = counts.get(NOT_HELPFUL, 0) + absent
    return fit_error_text(num_all_nodes, counts)


def aggregate(errors: Sequence[str]) -> str:
    """Several errors as one, as Go's errors aggregate words them: each distinct text once, in
    order, and in brackets when there is more than one."""
    distinct = list(dict.fromkeys(errors))
    joined = ", ".join(distinct)
    return joined if len(distinct) == 1 else f"[{joined}]"
