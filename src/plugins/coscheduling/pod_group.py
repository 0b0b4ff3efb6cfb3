"""One PodGroup model, read from whichever dialect a group is written in."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from datetime import datetime
from typing import Any

from plugins.coscheduling.dialects import NATIVE_RESOURCE
from plugins.coscheduling.dialects import GroupRef
from plugins.coscheduling.go_quantity import GoQuantity
from plugins.coscheduling.go_quantity import parse_go_quantity
from scheduler.objects.errors import InvalidObjectError
from scheduler.objects.resources import parse_resource_list


@dataclass(frozen=True, slots=True)
class PodGroup:
    """What scheduling needs of a group. `gang` is False for a native group with the basic
    policy: its pods are scheduled one by one, as if they had no group.

    `min_resources` is None when the spec has none; present but empty (`{}`), the cluster is
    still checked for a pod slot per member, as upstream checks all but a nil list.
    `min_resource_quantities` holds the same amounts as Go's resource.Quantity reads them, for
    the gap text."""

    ref: GroupRef
    uid: str
    min_member: int
    min_resources: Mapping[str, int] | None
    schedule_timeout_seconds: float | None
    created: float  # creationTimestamp, seconds since the epoch (0 when not set)
    gang: bool = True
    min_resource_quantities: Mapping[str, GoQuantity] = field(default_factory=dict)


def parse_pod_group(ref: GroupRef, raw: Mapping[str, Any]) -> PodGroup:
    """The group in `raw`; InvalidObjectError naming the PodGroup and field if it is malformed."""
    meta = raw.get("metadata") or {}
    spec = raw.get("spec") or {}
    where = f"PodGroup {ref.full_name}"
    if not isinstance(spec, Mapping):
        raise InvalidObjectError(f"{where}: spec must be an object")
    created = _timestamp(meta.get("creationTimestamp"), f"{where}: metadata.creationTimestamp")
    uid = str(meta.get("uid") or "")
    if ref.resource == NATIVE_RESOURCE:
        return _native(ref, uid, created, spec, where)
    min_member = _positive(spec.get("minMember", 1), f"{where}: spec.minMember")
    raw_resources = spec.get("minResources")
    min_resources = None
    quantities: dict[str, GoQuantity] = {}
    if raw_resources is not None:
        min_resources = parse_resource_list(raw_resources, f"{where}: spec.minResources")
        quantities = _as_go_quantities(raw_resources) if min_resources else {}
    timeout_raw = spec.get("scheduleTimeoutSeconds")
    timeout = None
    if timeout_raw is not None and timeout_raw != 0:
        # 0 means the plugin's permitWaitingTimeSeconds, as scheduler-plugins reads it.
        timeout = float(_positive(timeout_raw, f"{where}: spec.scheduleTimeoutSeconds"))
    return PodGroup(
        ref,
        uid,
        min_member,
        min_resources,
        timeout,
        created,
        min_resource_quantities=quantities,
    )


def _as_go_quantities(raw: Mapping[str, Any]) -> dict[str, GoQuantity]:
    """The quantities as written (already checked), as Go reads them from the JSON."""
    # A JSON number reaches Go as its text; Python's repr of a float reads back the same.
    return {
        name: parse_go_quantity(value if isinstance(value, str) else repr(value))
        for name, value in raw.items()
    }


def _native(
    ref: GroupRef, uid: str, created: float, spec: Mapping[str, Any], where: str
) -> PodGroup:
    policy = spec.get("schedulingPolicy") or {}
    gang = policy.get("gang") if isinstance(policy, Mapping) else None
    if not isinstance(gang, Mapping):
        # The basic policy: a label for the pods, no all-or-nothing placement.
        return PodGroup(ref, uid, 1, None, None, created, gang=False)
    min_count = _positive(gang.get("minCount"), f"{where}: spec.schedulingPolicy.gang.minCount")
    return PodGroup(ref, uid, min_count, None, None, created)


def _positive(value: Any, where: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidObjectError(f"{where}: must be a positive integer, got {value!r}")
    return value


def _timestamp(value: Any, where: str) -> float:
    if not value:
        return 0.0
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp()
    except ValueError as exc:
        raise InvalidObjectError(f"{where}: not an RFC 3339 time: {value!r}") from exc
