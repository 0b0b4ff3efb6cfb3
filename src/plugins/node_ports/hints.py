"""QueueingHints of NodePorts."""

from __future__ import annotations

from plugins.helpers import deleted_pod
from plugins.node_ports.ports import ports_conflict
from scheduler.framework import Pod
from scheduler.framework import QueueingHint


def is_schedulable_after_pod_deleted(pod: Pod, old: object, new: object) -> QueueingHint:
    """Queue only when the deleted pod held (or was about to hold) a port this pod wants."""
    gone = deleted_pod(old, new)
    if not gone.node_name and not gone.nominated_node_name:
        return QueueingHint.QUEUE_SKIP
    if not gone.host_ports or not ports_conflict(pod.host_ports, gone.host_ports):
        return QueueingHint.QUEUE_SKIP
    return QueueingHint.QUEUE
