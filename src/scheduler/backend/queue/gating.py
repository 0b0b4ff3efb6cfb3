"""PreEnqueue: the gate a pod must pass before it may enter activeQ or backoffQ."""

from __future__ import annotations

from collections.abc import Callable

from scheduler.framework.queued_pod import QueuedPodInfo
from scheduler.framework.status import Code
from scheduler.framework.status import Status
from scheduler.objects.pod import Pod
from scheduler.observability import get_logger

logger = get_logger(__name__)

UNNAMED_PRE_ENQUEUE = "PreEnqueue"
"""Gating plugin recorded when a PreEnqueue rejection does not name its plugin."""


PreEnqueue = Callable[[Pod, str], Status]
"""Runs a pod's PreEnqueue plugins, given the plugin that gates it now ("" for none)."""


def run_pre_enqueue(pre_enqueue: PreEnqueue, info: QueuedPodInfo) -> bool:
    """Run PreEnqueue on the pod and record the outcome on `info`; True if it may proceed.

    A rejection makes the rejecting plugin the gating plugin and one of the pod's
    unschedulable plugins, so that only events that plugin registered can release the pod.
    """
    status = pre_enqueue(info.pod, info.gating_plugin)
    if status.is_success:
        info.gating_plugin = ""
        return True
    plugin = status.plugin or UNNAMED_PRE_ENQUEUE
    info.unschedulable_plugins.add(plugin)
    info.gating_plugin = plugin
    if status.code is Code.ERROR:
        logger.error("PreEnqueue failed", pod=info.key, plugin=plugin, err=status.message())
    else:
        logger.debug(
            "Pod gated by PreEnqueue", pod=info.key, plugin=plugin, reason=status.message()
        )
    return False
