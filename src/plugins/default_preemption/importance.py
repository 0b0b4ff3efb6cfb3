"""Which pods matter more: the order in which victims are reprieved and candidates compared.

A pod is more important than another if its priority is higher; between equal priorities the
one that started earlier is (it has more work to lose). A pod that has not started yet (no
`status.startTime`) counts as starting now, as upstream does.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from scheduler.framework import Pod


def start_time(pod: Pod, now: datetime) -> datetime:
    """`status.startTime`, or `now` for a pod that has not started (or has an unreadable one)."""
    raw = (pod.raw.get("status") or {}).get("startTime")
    if not raw:
        return now
    try:
        parsed = datetime.fromisoformat(str(raw))
    except ValueError:
        return now
    # API timestamps carry "Z"; one without a zone is read as UTC rather than failing compares.
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=now.tzinfo)


def by_importance(pods: Iterable[Pod], now: datetime) -> list[Pod]:
    """`pods` from the most to the least important (a stable sort)."""
    return sorted(pods, key=lambda p: (-p.priority, start_time(p, now)))


def earliest_start_of_highest_priority(victims: Sequence[Pod], now: datetime) -> datetime:
    """Among the victims with the highest priority, the earliest start time."""
    top = max(p.priority for p in victims)
    return min(start_time(p, now) for p in victims if p.priority == top)
