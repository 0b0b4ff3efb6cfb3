"""PodGroup status, written as scheduler-plugins' controller writes it, by the scheduler itself.

Phases move Pending -> Scheduling (enough members exist; scheduleStartTime is stamped) ->
Running (enough members run), forward only, as the controller moves them. The scheduler's pod
informer does not keep finished pods, so it cannot tell a finished member from a deleted one:
Finished and Failed are not written, and a group whose members finish keeps its phase (were
fewer members read as lost ones, a group of short jobs would fall back to Pending).
The loop runs on the replica that schedules, from the moment it starts to, pods pending or not.

Each profile writes the status of the groups it serves: those with a member, bound or not,
that names it as its scheduler. A group with no members yet only has an empty phase set to
Pending. Every other group is left to whoever schedules it (scheduler-plugins' own controller,
another scheduler using the same groups), so two writers do not undo each other's status.

Leaving Pending with enough members also writes occupiedBy, as the controller's
fillOccupiedObj does: the owners of one member, `namespace/name` each, sorted and
comma-separated (left as it was when that member has no owner).

The status has no field for a reason, so when a group has members but fewer than minMember,
the loop also writes a Warning Event about the PodGroup saying so, once each time the group
enters that state, so `kubectl describe podgroup` tells why nothing is bound. Its note names
no current count: repeated Events are correlated into one series that keeps its first note
(as client-go's recorder does), so a count in it would soon be stale.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from plugins.coscheduling.dialects import SIGS_RESOURCE
from plugins.coscheduling.dialects import X_K8S_RESOURCE
from plugins.coscheduling.dialects import ref_of_group_object
from plugins.coscheduling.members import PODS_RESOURCE
from plugins.coscheduling.members import Members
from plugins.coscheduling.members import members_of
from scheduler.framework import Handle
from scheduler.framework import ObjectReference
from scheduler.framework.errors import APIError
from scheduler.objects.raw import DEFAULT_NAMESPACE

PENDING = "Pending"
SCHEDULING = "Scheduling"
RUNNING = "Running"
# The dialects whose PodGroup status has this shape (the native one has conditions instead).
STATUS_RESOURCES = (X_K8S_RESOURCE, SIGS_RESOURCE)
SYNC_PERIOD_SECONDS = 1.0
WAITING_REASON = "WaitingForMembers"


def desired_status(
    current: Mapping[str, Any], min_member: int, members: Members, now: datetime
) -> dict[str, Any]:
    was = phase = str(current.get("phase") or "")
    start = current.get("scheduleStartTime")
    enough = members.total >= min_member
    if phase in ("", PENDING, SCHEDULING):
        if members.running >= min_member:
            phase = RUNNING
        elif enough:
            if phase != SCHEDULING:
                start = _rfc3339(now)
            phase = SCHEDULING
        elif phase != SCHEDULING:
            phase = PENDING
    status: dict[str, Any] = {
        **current,
        "phase": phase,
        "running": members.running,
    }
    if start:
        status["scheduleStartTime"] = start
    if was in ("", PENDING) and phase in (SCHEDULING, RUNNING):
        # Upstream writes it on its way through Scheduling, which this loop may skip.
        owners = occupied_by(members)
        if owners:
            status["occupiedBy"] = owners
    return status


def occupied_by(members: Members) -> str:
    """The owners of the group's first member (by name; upstream takes the first its list
    returns), as `namespace/name` sorted and comma-separated; "" when it has none."""
    if not members.pods:
        return ""
    first = members.pods[min(members.pods)]
    meta = first.get("metadata") or {}
    namespace = str(meta.get("namespace") or DEFAULT_NAMESPACE)
    owners = meta.get("ownerReferences") or []
    return ",".join(
        sorted(f"{namespace}/{owner.get('name')}" for owner in owners if isinstance(owner, Mapping))
    )


def _rfc3339(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def waiting_note(min_member: int, members: Members) -> str | None:
    """Why the group's pods wait, while members exist but fewer than minMember."""
    if not 0 < members.total < min_member:
        return None
    return (
        f"fewer pods of the group exist than its minMember ({min_member}); none of them is "
        f"scheduled until {min_member} exist"
    )


def _tell_why(
    handle: Handle, raw: Mapping[str, Any], note: str | None, told: dict[str, str]
) -> None:
    meta = raw.get("metadata") or {}
    uid = str(meta.get("uid") or "")
    if note is None:
        told.pop(uid, None)
        return
    if told.get(uid) == note:
        return
    told[uid] = note
    regarding = ObjectReference(
        str(raw.get("apiVersion") or ""),
        str(raw.get("kind") or "PodGroup"),
        str(meta.get("namespace") or DEFAULT_NAMESPACE),
        str(meta.get("name") or ""),
        uid,
        str(meta.get("resourceVersion") or ""),
    )
    handle.record_object_event(
        regarding, event_type="Warning", reason=WAITING_REASON, action="Scheduling", note=note
    )


def _scheduled_here(handle: Handle, pods: Iterable[Mapping[str, Any]]) -> bool:
    return any(
        (raw.get("spec") or {}).get("schedulerName", "default-scheduler") == handle.profile_name
        for raw in pods
    )


def _serves(handle: Handle, members: Members) -> bool:
    """Whether this profile schedules the group's waiting pods (so one profile reports)."""
    return _scheduled_here(handle, members.unbound)


def _keeps_status(handle: Handle, members: Members, current: Mapping[str, Any]) -> bool:
    """Whether this profile writes the group's status (see the module's docstring)."""
    if not members.pods:
        return not current.get("phase")
    return _scheduled_here(handle, members.pods.values())


async def sync_once(handle: Handle, told: dict[str, str] | None = None) -> int:
    """Patch every PodGroup whose status is out of date; returns how many were patched.
    `told` remembers the last waiting note written per PodGroup uid."""
    told = told if told is not None else {}
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
            members = members_of(pods, ref)
            if not _keeps_status(handle, members, current):
                continue
            if _serves(handle, members):
                _tell_why(handle, raw, waiting_note(min_member, members), told)
            wanted = desired_status(current, min_member, members, handle.clock.wall())
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
    told: dict[str, str] = {}
    while True:
        await sync_once(handle, told)
        await handle.clock.sleep(SYNC_PERIOD_SECONDS)
