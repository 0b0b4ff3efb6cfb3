"""The leader-election record a coordination.k8s.io/v1 Lease carries in its spec."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC
from datetime import datetime
from typing import Any

LEASE_API_VERSION = "coordination.k8s.io/v1"


def micro_time(moment: datetime) -> str:
    """RFC 3339 in UTC with microseconds, as metav1.MicroTime serialises."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True, slots=True)
class LeaseRecord:
    """Who holds the lease, for how long a renewal counts, and how often it changed hands.

    An empty `holder_identity` means nobody holds it: a released lease, free to take at once.
    """

    holder_identity: str
    lease_duration_seconds: int
    acquire_time: str
    renew_time: str
    lease_transitions: int

    @classmethod
    def from_lease(cls, lease: Mapping[str, Any]) -> LeaseRecord:
        # Absent fields read as their zero value, as the Go client reads nil pointers.
        spec = lease.get("spec") or {}
        return cls(
            holder_identity=str(spec.get("holderIdentity") or ""),
            lease_duration_seconds=int(spec.get("leaseDurationSeconds") or 0),
            acquire_time=str(spec.get("acquireTime") or ""),
            renew_time=str(spec.get("renewTime") or ""),
            lease_transitions=int(spec.get("leaseTransitions") or 0),
        )

    def to_spec(self) -> dict[str, Any]:
        return {
            "holderIdentity": self.holder_identity,
            "leaseDurationSeconds": self.lease_duration_seconds,
            "acquireTime": self.acquire_time,
            "renewTime": self.renew_time,
            "leaseTransitions": self.lease_transitions,
        }


def new_lease(namespace: str, name: str, record: LeaseRecord) -> dict[str, Any]:
    return {
        "apiVersion": LEASE_API_VERSION,
        "kind": "Lease",
        "metadata": {"namespace": namespace, "name": name},
        "spec": record.to_spec(),
    }


def with_record(lease: Mapping[str, Any], record: LeaseRecord) -> dict[str, Any]:
    """`lease` (metadata and resourceVersion kept, for optimistic concurrency) with a new spec."""
    return {**lease, "metadata": dict(lease.get("metadata") or {}), "spec": record.to_spec()}
