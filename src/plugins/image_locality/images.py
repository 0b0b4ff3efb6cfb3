"""Image names and sizes as ImageLocality compares them."""

from __future__ import annotations

from scheduler.framework import Pod

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
    """Normalized images the pod pulls, one entry per init container, container and image
    volume (`spec.volumes[].image.reference`), in that order."""
    spec = pod.raw.get("spec") or {}
    references = [
        str(container.get("image") or "")
        for key in ("initContainers", "containers")
        for container in spec.get(key) or ()
    ]
    for volume in spec.get("volumes") or ():
        image = volume.get("image")
        if image is not None:
            references.append(str(image.get("reference") or ""))
    return tuple(normalized_image_name(reference) for reference in references)


def container_count(pod: Pod) -> int:
    """Init and regular containers: each raises the score's cap, image volumes do not."""
    spec = pod.raw.get("spec") or {}
    return len(spec.get("initContainers") or ()) + len(spec.get("containers") or ())


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
