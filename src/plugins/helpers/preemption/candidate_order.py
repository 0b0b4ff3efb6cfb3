"""Picking the candidate whose preemption hurts least.

Criteria, each only breaking the ties of the ones before it:
1. fewest PodDisruptionBudget violations;
2. lowest priority of the most important victim;
3. smallest sum of victim priorities (each shifted by 2^31 so that many negative-priority
   victims never look cheaper than fewer of them);
4. fewest victims;
5. latest start time among the highest-priority victims (disturb the youngest work);
6. the first candidate in dry-run order.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
from datetime import datetime

from plugins.helpers.preemption.candidates import Candidate
from plugins.helpers.preemption.importance import earliest_start_of_highest_priority

# Upstream adds MaxInt32 + 1 to every priority before summing.
_PRIORITY_SHIFT = 2**31

Score = Callable[[Candidate], float]


def _criteria(now: datetime) -> tuple[Score, ...]:
    """Higher is better for every criterion."""
    return (
        lambda c: -c.victims.num_pdb_violations,
        lambda c: -c.victims.pods[0].priority,
        lambda c: -sum(p.priority + _PRIORITY_SHIFT for p in c.victims.pods),
        lambda c: -len(c.victims.pods),
        lambda c: earliest_start_of_highest_priority(c.victims.pods, now).timestamp(),
    )


def pick_best(candidates: Sequence[Candidate], now: datetime) -> Candidate | None:
    """The preferred candidate (victims of each are most important first), or None if none."""
    remaining = list(candidates)
    if len(remaining) <= 1:
        return remaining[0] if remaining else None
    for score in _criteria(now):
        scores = [score(c) for c in remaining]
        best = max(scores)
        remaining = [c for c, s in zip(remaining, scores, strict=True) if s == best]
        if len(remaining) == 1:
            break
    return remaining[0]
