"""QueueingHints: which pod and node events may let a pod this plugin rejected fit again."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from plugins.helpers import as_view
from plugins.helpers.extended_resources import DeviceClassResolver
from plugins.helpers.extended_resources import explicit_resource_name
from plugins.helpers.extended_resources import implicit_resource_name
from plugins.helpers.resources.names import is_scalar
from plugins.node_resources_fit.fits import insufficient_resources
from plugins.node_resources_fit.requests import PodResourceRequest
from scheduler.framework import Node
from scheduler.framework import Pod
from scheduler.framework import QueueingHint
from scheduler.objects.resources import CPU
from scheduler.objects.resources import EPHEMERAL_STORAGE
from scheduler.objects.resources import MEMORY
from scheduler.objects.resources import PODS

QUEUE = QueueingHint.QUEUE
SKIP = QueueingHint.QUEUE_SKIP


def after_pod_event(pod: Pod, old: Any, new: Any) -> QueueingHint:
    """A pod went away or shrank in place; it helps only if it freed something `pod` asks for."""
    try:
        original, modified = as_view(old, Pod), as_view(new, Pod)
    except TypeError:
        return QUEUE  # as upstream: a hint that cannot judge the event requeues
    if modified is None:
        if original is None:
            return QUEUE
        # An unscheduled, un-nominated pod held nothing on any node.
        if not original.node_name and not original.nominated_node_name:
            return SKIP
        return QUEUE
    if original is None:
        return QUEUE
    return QUEUE if _scale_down_helps(pod, original, modified) else SKIP


def _scale_down_helps(target: Pod, original: Pod, modified: Pod) -> bool:
    if modified.uid == target.uid:
        return True  # the rejected pod itself shrank
    if not modified.node_name:
        return False
    for name, quantity in target.requests.items():
        if not quantity or not (name in (CPU, MEMORY, EPHEMERAL_STORAGE) or is_scalar(name)):
            continue
        if original.requests.get(name, 0) > modified.requests.get(name, 0):
            return True
    return False


def fits_empty_node(request: PodResourceRequest, node: Node) -> bool:
    """Whether the pod would fit `node` with nothing on it (ignored resources not applied, as
    upstream's hint does not apply them either)."""
    return not insufficient_resources(request, node.allocatable, {}, 0)


def after_node_change(
    pod: Pod, old: Any, new: Any, resolver: DeviceClassResolver | None = None
) -> QueueingHint:
    """A node was added or its allocatable changed: queue if it could now hold the pod."""
    try:
        original, modified = as_view(old, Node), as_view(new, Node)
    except TypeError:
        return QUEUE
    request = PodResourceRequest.of_pod(pod, resolver)
    if modified is None or not fits_empty_node(request, modified):
        return SKIP
    if original is None:
        return QUEUE
    return QUEUE if _requested_capacity_grew(request, original, modified) else SKIP


def _requested_capacity_grew(request: PodResourceRequest, original: Node, modified: Node) -> bool:
    """Did the node gain pod slots, or more of something the pod requests? A resource left to
    DynamicResources on the node may now come from its devices, so it counts as grown."""
    before, after = original.allocatable, modified.allocatable
    if after.get(PODS, 0) > before.get(PODS, 0):
        return True
    return any(
        after.get(name, 0) > before.get(name, 0)
        or request.left_to_devices(name, after.get(name, 0))
        for name, _ in request.checked()
    )


def after_device_class_change(pod: Pod, old: Any, new: Any) -> QueueingHint:
    """A DeviceClass was added, or changed the extended resource it provides: queue if the pod
    asks for the resource it now provides (by its explicit name, or implicitly when added)."""
    if not isinstance(new, Mapping) or not (old is None or isinstance(old, Mapping)):
        return QUEUE  # as upstream: a hint that cannot judge the event requeues
    asked = pod.requests
    explicit = explicit_resource_name(new)
    if old is not None:
        if explicit_resource_name(old) == explicit:
            return SKIP
    elif implicit_resource_name(new) in asked:
        return QUEUE
    return QUEUE if explicit is not None and explicit in asked else SKIP
