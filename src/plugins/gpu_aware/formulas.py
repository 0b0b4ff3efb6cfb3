"""A node's GPU score from its mean GPU utilisation U and free GPU memory F (both percent):

    Spread: (wu * (100 - U) + wm * F) / (wu + wm)
    Pack:   (wu * U + wm * (100 - F)) / (wu + wm)

rounded half up, with values clamped to [0, 100]. A measure the node lacks drops out with its
weight; a node with neither scores 0.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]


def gpu_score(
    utilization: float | None, free_memory: float | None, pack: bool, wu: int, wm: int
) -> int:
    total = weight = 0.0
    if utilization is not None and wu:
        u = min(max(utilization, 0.0), 100.0)
        total += wu * (u if pack else 100.0 - u)
        weight += wu
    if free_memory is not None and wm:
        f = min(max(free_memory, 0.0), 100.0)
        total += wm * (100.0 - f if pack else f)
        weight += wm
    return 0 if weight == 0 else math.floor(total / weight + 0.5)


def gpu_score_rows(utilization: Floats, free_memory: Floats, pack: bool, wu: int, wm: int) -> Ints:
    """NaN marks a missing measure."""
    total = np.zeros(len(utilization), dtype=np.float64)
    weight = np.zeros(len(utilization), dtype=np.float64)
    if wu:
        has = ~np.isnan(utilization)
        u = np.clip(np.nan_to_num(utilization, nan=0.0), 0.0, 100.0)
        total += np.where(has, wu * (u if pack else 100.0 - u), 0.0)
        weight += np.where(has, float(wu), 0.0)
    if wm:
        has = ~np.isnan(free_memory)
        f = np.clip(np.nan_to_num(free_memory, nan=0.0), 0.0, 100.0)
        total += np.where(has, wm * (100.0 - f if pack else f), 0.0)
        weight += np.where(has, float(wm), 0.0)
    safe = np.where(weight == 0, 1.0, weight)
    scores = np.where(weight == 0, 0.0, np.floor(total / safe + 0.5))
    return scores.astype(np.int64)
