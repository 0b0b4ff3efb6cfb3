"""What Coscheduling remembers about groups between cycles.

- `assigned`: members that passed Permit (waiting or allowed), by pod key, with the node and UID
  so waiting siblings can be found and their requests given back when sizing the cluster.
- a backoff deadline per group rejected as a whole (podGroupBackoffSeconds), set once per
  backoff;
- a "permitted" deadline per group whose minResources check passed, so the cluster-wide sum is
  not redone for every member within the plugin's permitWaitingTimeSeconds;
- the time of each group's last failure, which QueueSort uses in place of its creation time;
- the member whose own failure (it fit nowhere) last turned its group away, until it gets
  through Filter again: while it cannot, its siblings giving their places back is no news to
  the group.
All times are the injected clock's seconds.
"""

from __future__ import annotations

from dataclasses import dataclass

from plugins.coscheduling.dialects import GroupRef


@dataclass(frozen=True, slots=True)
class Assignment:
    uid: str
    node_name: str


class GroupTracker:
    def __init__(self) -> None:
        self._assigned: dict[GroupRef, dict[str, Assignment]] = {}
        self._backoff_until: dict[GroupRef, float] = {}
        self._permitted_until: dict[GroupRef, float] = {}
        self._failed_at: dict[GroupRef, float] = {}
        self._held_back_by: dict[GroupRef, str] = {}

    # ---- members past Permit -----------------------------------------------------------

    def assign(self, ref: GroupRef, pod_key: str, uid: str, node_name: str) -> None:
        self._assigned.setdefault(ref, {})[pod_key] = Assignment(uid, node_name)

    def unassign(self, ref: GroupRef, pod_key: str) -> None:
        assigned = self._assigned.get(ref)
        if assigned is not None:
            assigned.pop(pod_key, None)
            if not assigned:
                del self._assigned[ref]

    def assigned(self, ref: GroupRef, live: set[str] | None = None) -> dict[str, Assignment]:
        """Members past Permit; with `live`, members no longer existing are forgotten first."""
        assigned = self._assigned.get(ref, {})
        if live is not None:
            for gone in [key for key in assigned if key not in live]:
                del assigned[gone]
        return dict(assigned)

    # ---- backoff, permitted cache, failure time ------------------------------------------

    def back_off(self, ref: GroupRef, now: float, seconds: float) -> None:
        """Start the group's backoff, unless one is running: a rejection during a backoff does
        not extend it (upstream's go-cache Add keeps an unexpired entry)."""
        if not self.in_backoff(ref, now):
            self._backoff_until[ref] = now + seconds

    def in_backoff(self, ref: GroupRef, now: float) -> float:
        """Seconds of backoff left (0 when none)."""
        until = self._backoff_until.get(ref)
        if until is None:
            return 0.0
        if until <= now:
            del self._backoff_until[ref]
            return 0.0
        return until - now

    def permit_resources(self, ref: GroupRef, until: float) -> None:
        self._permitted_until[ref] = until

    def resources_permitted(self, ref: GroupRef, now: float) -> bool:
        until = self._permitted_until.get(ref)
        if until is None:
            return False
        if until <= now:
            del self._permitted_until[ref]
            return False
        return True

    def forget_resources_check(self, ref: GroupRef) -> None:
        self._permitted_until.pop(ref, None)

    def record_failure(self, ref: GroupRef, now: float) -> None:
        self._failed_at[ref] = now

    def clear_failure(self, ref: GroupRef) -> None:
        self._failed_at.pop(ref, None)

    def failed_at(self, ref: GroupRef) -> float | None:
        return self._failed_at.get(ref)

    # ---- the member that fit nowhere -------------------------------------------------------

    def hold_back(self, ref: GroupRef, pod_key: str) -> None:
        self._held_back_by[ref] = pod_key

    def held_back_by(self, ref: GroupRef) -> str | None:
        return self._held_back_by.get(ref)

    def release_hold(self, ref: GroupRef, pod_key: str) -> None:
        """`pod_key` got through Filter: if it held the group back, it does no longer."""
        if self._held_back_by.get(ref) == pod_key:
            del self._held_back_by[ref]
