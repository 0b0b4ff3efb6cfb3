"""Which pods matter more: the order in which victims are reprieved and candidates compared.

A pod is more important than another if its priority is higher; between equal priorities the
one that started earlier is (it has more work to lose). A pod that has not started yet (no
`status.startTime`) counts as starting now, as upstream does.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Sequence
from datetime import datetime

from plugins.helpers.go_sort import go_sort_slice
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


def _started_at(pod: Pod, now: datetime) -> datetime | None:
    raw = (pod.raw.get("status") or {}).get("startTime")
    return start_time(pod, now) if raw else None


def more_important(first: Pod, second: Pod, now: datetime) -> bool:
    """Upstream's MoreImportantPod, asymmetry included: a pod without a start time is given
    `time.Now()` at each call, the first pod's read before the second's, so between two such
    pods of equal priority the first one asked about always counts as more important."""
    if first.priority != second.priority:
        return first.priority > second.priority
    started_first, started_second = _started_at(first, now), _started_at(second, now)
    if started_first is None and started_second is None:
        return True
    return (started_first or now) < (started_second or now)


def reprieve_order(pods: Sequence[Pod], now: datetime) -> list[Pod]:
    """The order upstream reprieves potential victims in: Go's sort.Slice over node order with
    `more_important` as less. Its ties are the sort's own: up to 12 pods it is an insertion
    sort, so equal pods that have not started come out in reverse node order (the asymmetric
    comparison moves each one ahead of all before it); past 12 it partitions, and the order of
    ties follows from the partitions."""
    return go_sort_slice(pods, lambda first, second: more_important(first, second, now))


def least_important_first(pods: Iterable[Pod], now: datetime) -> list[Pod]:
    """`pods` sorted as scheduler-plugins' CapacityScheduling sorts a node's pods before
    choosing victims: Go's sort.Slice with the negation of `more_important` as less."""
    return go_sort_slice(pods, lambda first, second: not more_important(first, second, now))


def earliest_start_of_highest_priority(victims: Sequence[Pod], now: datetime) -> datetime:
    """Among the victims with the highest priority, the earliest start time."""
    top = max(p.priority for p in victims)
    return min(start_time(p, now) for p in victims if p.priority == top)
