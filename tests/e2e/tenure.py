"""Who held a Lease when, from the apiserver's own record of the writes to it.

A tenure starts when a write that names a new holder completes (the holder learns it leads only
from the answer) and ends at the earliest of: the write that releases it (received), the write
by which another holder takes it (received), and the holder's last successful write (received)
plus the leaseDuration that write set. A Binding proves its author held the Lease only if the
server received it inside one of the author's tenures and completed it before that tenure ended:
the server commits it somewhere in between, so anything less strict could let a Binding be
committed while nobody held the Lease. The looser count, Bindings received outside any tenure,
is kept too: those were sent by a process that had no claim to the Lease at all.

A takeover is early when the new holder's write reached the server less than leaseDuration after
the previous holder's last write completed, without a release in between: the standby cannot
have waited a full leaseDuration after observing that write.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from tests.e2e.audit import AuditRecord


@dataclass(frozen=True)
class Tenure:
    user: str
    holder: str
    start: float
    end: float
    released: bool

    def covers(self, record: AuditRecord) -> bool:
        """The request arrived and completed within the tenure."""
        return self.admits(record) and record.completed_at <= self.end

    def admits(self, record: AuditRecord) -> bool:
        """The request arrived within the tenure."""
        return record.user == self.user and self.start <= record.received_at <= self.end


@dataclass(frozen=True)
class Acquisition:
    """A write that named a new holder, with what preceded it."""

    user: str
    holder: str
    at: float  # the write's completion
    previous_user: str  # "" for the first holder, or after a release
    gap_s: float  # from the previous holder's last write completing to this one's arrival
    lease_duration_s: float

    @property
    def early(self) -> bool:
        return bool(self.previous_user) and self.gap_s < self.lease_duration_s


@dataclass
class _Open:
    user: str
    holder: str
    start: float
    last_received: float
    last_completed: float
    duration_s: float

    def close(self, at: float, *, released: bool) -> Tenure:
        end = min(at, self.last_received + self.duration_s)
        return Tenure(self.user, self.holder, self.start, end, released)


@dataclass(frozen=True)
class LeaseTimeline:
    tenures: list[Tenure]
    acquisitions: list[Acquisition]

    def holders(self) -> list[str]:
        return [tenure.user for tenure in self.tenures]

    def outside(self, bindings: Iterable[AuditRecord]) -> list[AuditRecord]:
        """The bindings no tenure of their author covers."""
        return [b for b in bindings if not any(tenure.covers(b) for tenure in self.tenures)]

    def received_outside(self, bindings: Iterable[AuditRecord]) -> list[AuditRecord]:
        """The bindings that arrived outside every tenure of their author."""
        return [b for b in bindings if not any(tenure.admits(b) for tenure in self.tenures)]


def _commit_order(record: AuditRecord) -> tuple[int, float]:
    # The resourceVersion a write produced orders writes as etcd committed them.
    version = ((record.response or {}).get("metadata") or {}).get("resourceVersion", "0")
    return int(version), record.completed_at


def lease_timeline(records: Iterable[AuditRecord], namespace: str, name: str) -> LeaseTimeline:
    writes = sorted(
        (
            r
            for r in records
            if r.is_lease_write and r.succeeded and (r.namespace, r.name) == (namespace, name)
        ),
        key=_commit_order,
    )
    tenures: list[Tenure] = []
    acquisitions: list[Acquisition] = []
    current: _Open | None = None
    last_released = True
    previous_completed, previous_user = 0.0, ""
    for write in writes:
        spec = write.lease_spec()
        holder = str(spec.get("holderIdentity") or "")
        duration = float(spec.get("leaseDurationSeconds") or 0)
        if current is not None and holder == current.holder and write.user == current.user:
            current.last_received, current.last_completed = write.received_at, write.completed_at
            current.duration_s = duration
            continue
        if current is not None:
            tenures.append(current.close(write.received_at, released=not holder))
            previous_completed, previous_user = current.last_completed, current.user
            last_released = not holder
            current = None
        if not holder:
            continue
        acquisitions.append(
            Acquisition(
                user=write.user,
                holder=holder,
                at=write.completed_at,
                previous_user="" if last_released else previous_user,
                gap_s=write.received_at - previous_completed,
                lease_duration_s=duration,
            )
        )
        current = _Open(
            write.user, holder, write.completed_at, write.received_at, write.completed_at, duration
        )
    if current is not None:
        tenures.append(current.close(current.last_received + current.duration_s, released=False))
    return LeaseTimeline(tenures, acquisitions)
