"""What a pod is expected to add to a node's measured load."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from scheduler.framework import Pod
from scheduler.objects.resources import CPU
from scheduler.objects.resources import MEMORY
from scheduler.objects.resources import quantity_in_units


def _cpu_of(resources: Mapping[str, Any] | None) -> int | None:
    if not resources or CPU not in resources:
        return None
    return quantity_in_units(CPU, resources[CPU])


def predicted_cpu_millis(pod: Pod, default_millis: int, multiplier: float) -> int:
    """TargetLoadPacking's guess of the pod's CPU use: per regular container its limit, else
    its request times `multiplier` (rounded half away from zero), else `default_millis`; plus
    the pod overhead. Init containers are left out: they finish before the load is measured."""
    spec = pod.raw.get("spec") or {}
    total = 0
    for container in spec.get("containers") or ():
        resources = container.get("resources") or {}
        limit = _cpu_of(resources.get("limits"))
        request = _cpu_of(resources.get("requests"))
        if limit is not None:
            total += limit
        elif request is not None:
            total += math.floor(request * multiplier + 0.5)
        else:
            total += default_millis
    return total + (_cpu_of(spec.get("overhead")) or 0)


def requested(pod: Pod) -> tuple[int, int]:
    """LoadVariationRiskBalancing's demand: the pod's effective CPU (millicores) and memory
    (bytes) requests, init containers and overhead included."""
    return pod.requests.get(CPU, 0), pod.requests.get(MEMORY, 0)
