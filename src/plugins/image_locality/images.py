"""Image names and sizes as ImageLocality compares them."""

from __future__ import annotations

from scheduler.framework import Pod
from scheduler.objects.node import Node

MB = 1024 * 1024
# Bounds of the scored range: below 23 MiB an image is worth nothing, and each container
# can add at most 1000 MiB (the 90th percentile of registry image sizes falls inside).
MIN_THRESHOLD = 23 * MB
MAX_CONTAINER_THRESHOLD = 1000 * MB


def normalized_image_name(name: str) -> str:
    """Add the implicit `:latest` tag the way the container runtime reports it."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def pod_image_names(pod: Pod) -> tuple[str, ...]:
    """Normalized images of the init and regular containers, one entry per container."""
    return tuple(normalized_image_name(image) for image in pod.images)


def container_count(pod: Pod) -> int:
    spec = pod.raw.get("spec") or {}
    return len(spec.get("initContainers") or ()) + len(spec.get("containers") or ())


def node_image_sizes(node: Node) -> dict[str, int]:
    """Size of every image name the node reports; the first entry wins for repeated names."""
    sizes: dict[str, int] = {}
    for image in node.images:
        for name in image.names:
            sizes.setdefault(name, image.size_bytes)
    return sizes


def scaled_image_score(size: int, holders: int, total_nodes: int) -> int:
    """The image size damped by how widely it has spread (holders / all nodes), so that a
    large image present on one node does not pull every pod onto it."""
    spread = holders / total_nodes
    return int(size * spread)


def calculate_priority(sum_scores: int, containers: int) -> int:
    """Map the summed image scores linearly from [23 MiB, containers x 1000 MiB] to 0-100."""
    max_threshold = MAX_CONTAINER_THRESHOLD * containers
    clamped = min(max(sum_scores, MIN_THRESHOLD), max_threshold)
    span = max_threshold - MIN_THRESHOLD
    if span <= 0:
        return 0
    return 100 * (clamped - MIN_THRESHOLD) // span
