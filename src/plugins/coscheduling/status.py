"""PodGroup status, written as scheduler-plugins' controller writes it, by the scheduler itself.

Phases move Pending -> Scheduling (enough members exist; scheduleStartTime is stamped) ->
Running (enough members run), and back to Pending while fewer than minMember exist. The
scheduler's pod informer does not keep finished pods, so it cannot tell a finished member from
a deleted one: Finished and Failed are not written, and a Running group stays Running.
The loop starts with the first scheduling cycle, which only the leader runs.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from plugins.coscheduling.dialects import SIGS_RESOURCE, X_K8S_RESOURCE, ref_of_group_object
from plugins.coscheduling.members import PODS_RESOURCE, Members, members_of
from scheduler.framework import Handle
from scheduler.framework.errors import APIError

PENDING = "Pending"
SCHEDULING = "Scheduling"
RUNNING = "Running"
# The dialects whose PodGroup status has this shape (the native one has conditions instead).
STATUS_RESOURCES = (X_K8S_RESOURCE, SIGS_RESOURCE)
SYNC_PERIOD_SECONDS = 1.0


def desired_status(
    current: Mapping[str, Any], min_member: int, members: Members, now: datetime
) -> dict[str, Any]:
    phase = str(current.get("phase") or "")
    start = current.get("scheduleStartTime")
    enough = members.total >= min_member
    if phase in ("", PENDING, SCHEDULING):
        if members.running >= min_member:
            phase = RUNNING
        elif enough:
            if phase != SCHEDULING:
                start = _rfc3339(now)
            phase = SCHEDULING
        else:
            phase = PENDING
    status: dict[str, Any] = {
        **current,
        "phase": phase,
        "running": members.running,
    }
    if start:
        status["scheduleStartTime"] = start
    return status


def _rfc3339(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


async def sync_once(handle: Handle) -> int:
    """Patch every PodGroup whose status is out of date; returns how many were patched."""
    pods = handle.lister(PODS_RESOURCE)
    patched = 0
    for resource in STATUS_RESOURCES:
        for raw in handle.lister(resource).list():
            spec = raw.get("spec") or {}
            min_member = spec.get("minMember", 1)
            if not isinstance(min_member, int) or isinstance(min_member, bool):
                continue  # unreadable; the plugin reports it on the members
            ref = ref_of_group_object(resource, raw)
            current = raw.get("status") or {}
            wanted = desired_status(current, min_member, members_of(pods, ref), handle.clock.wall())
            if wanted == current:
                continue
            try:
                await handle.api.patch_object(
                    resource, ref.namespace, ref.name, {"status": wanted}, subresource="status"
                )
            except APIError:
                # Gone or refused: the next pass sees the current state and tries again.
                continue
            patched += 1
    return patched


async def run_status_loop(handle: Handle) -> None:
    while True:
        await sync_once(handle)
        await handle.clock.sleep(SYNC_PERIOD_SECONDS)
