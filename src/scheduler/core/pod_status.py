"""What a failed attempt writes to the pod's status: the PodScheduled condition and the
nomination, only when they change (as upstream's updatePod does)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from scheduler.objects.pod import Pod


def pod_scheduled_condition(pod: Pod) -> Mapping[str, Any] | None:
    for condition in (pod.raw.get("status") or {}).get("conditions") or ():
        if condition.get("type") == "PodScheduled":
            found: Mapping[str, Any] = condition
            return found
    return None


def failure_status_patch(
    pod: Pod,
    *,
    message: str,
    rejected: bool,
    nominated: str,
    clear_nomination: bool,
    now: datetime,
    standing_nomination: str | None = None,
) -> dict[str, Any] | None:
    """The status patch for a failed attempt, or None if the pod already says all of it.

    The reason is Unschedulable for rejections and SchedulerError otherwise; the message is the
    full (untruncated) failure text. `nominated` is the node to nominate ("" for none); an
    existing nomination is cleared only when `clear_nomination` says so. The existing one is
    `pod`'s unless `standing_nomination` names the one the API holds (when the scheduler wrote
    it after `pod` was read).
    """
    reason = "Unschedulable" if rejected else "SchedulerError"
    standing = pod.nominated_node_name if standing_nomination is None else standing_nomination
    nomination_changes = nominated != standing and (bool(nominated) or clear_nomination)
    existing = pod_scheduled_condition(pod)
    if (
        existing is not None
        and existing.get("status") == "False"
        and existing.get("reason") == reason
        and existing.get("message") == message
        and not nomination_changes
    ):
        return None
    # The condition's status stays False, so its transition time stays (upstream's
    # UpdatePodCondition keeps it when only the reason or message change).
    transition = now.strftime("%Y-%m-%dT%H:%M:%SZ")
    if existing is not None and existing.get("status") == "False":
        transition = existing.get("lastTransitionTime") or transition
    condition: dict[str, Any] = {
        "type": "PodScheduled",
        "status": "False",
        "reason": reason,
        "message": message,
        "lastTransitionTime": transition,
        "lastProbeTime": None,
    }
    # The generation of the pod this verdict is about (PodObservedGenerationTracking, GA).
    if pod.generation:
        condition["observedGeneration"] = pod.generation
    status: dict[str, Any] = {"conditions": [condition]}
    if nomination_changes:
        status["nominatedNodeName"] = nominated or None
    return {"status": status}
