"""Whether a pod may land on a cordoned node."""

from __future__ import annotations

from scheduler.framework import Pod
from scheduler.objects.taints import NO_SCHEDULE
from scheduler.objects.taints import TAINT_NODE_UNSCHEDULABLE
from scheduler.objects.taints import Taint
from scheduler.objects.taints import tolerated

# A pod that tolerates this taint also tolerates spec.unschedulable.
UNSCHEDULABLE_TAINT = Taint(TAINT_NODE_UNSCHEDULABLE, "", NO_SCHEDULE)


def tolerates_unschedulable(pod: Pod) -> bool:
    return tolerated(UNSCHEDULABLE_TAINT, pod.tolerations)
