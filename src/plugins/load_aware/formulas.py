"""The two Trimaran scores, for one node and for arrays of nodes (same float operations).

TargetLoadPacking, with target T and predicted utilisation U (percent, measured load plus the
pod's and recently placed pods' predicted CPU, over allocatable CPU):
    U <= T:        round((100 - T) * U / T + T)        rises from T (idle) to 100 (at target)
    T < U <= 100:  round(T * (100 - U) / (100 - T))    falls from T to 0 (full)
    U > 100:       0

LoadVariationRiskBalancing, per resource with capacity C, measured mean M and standard deviation
S (absolute units) and demand D:
    mu = clamp((clamp(M, 0, C) + D) / C),  sigma = clamp(margin * (clamp(S, 0, C) / C)^(1/sens))
    score = (1 - (mu + sigma) / 2) * 100
and the node scores round(min(cpu, memory)) when both are measured, or the one that is.
Rounding is half away from zero, as Go's math.Round (scores are never negative).
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from scheduler.framework import MAX_NODE_SCORE

Floats = npt.NDArray[np.float64]
Ints = npt.NDArray[np.int64]


def _round(value: float) -> int:
    return math.floor(value + 0.5)


def predicted_percent(util_percent: float, capacity: float, added: float) -> float:
    if capacity == 0:
        return 0.0
    return 100 * (util_percent / 100 * capacity + added) / capacity


def target_load_packing(util_percent: float, capacity: float, added: float, target: int) -> int:
    predicted = predicted_percent(util_percent, capacity, added)
    if predicted > target:
        if predicted > 100:
            return 0
        return _round(target * (100 - predicted) / (100 - target))
    return _round((100 - target) * predicted / target + target)


def target_load_packing_rows(
    util_percent: Floats, capacity: Floats, added: Floats, target: int
) -> Ints:
    """Rows with NaN utilisation score 0 (no measurement: avoid the node, as upstream)."""
    safe = np.where(capacity == 0, 1.0, capacity)
    predicted = np.where(capacity == 0, 0.0, 100 * (util_percent / 100 * capacity + added) / safe)
    below = (100 - target) * predicted / target + target
    above = target * (100 - predicted) / (100 - target)
    score = np.where(predicted > target, np.where(predicted > 100, 0.0, above), below)
    score = np.where(np.isnan(util_percent), 0.0, np.floor(score + 0.5))
    return score.astype(np.int64)


def _clamp(value: float) -> float:
    return max(min(value, 1.0), 0.0)


def resource_risk_score(
    mean: float, std_dev: float, demand: float, capacity: float, margin: float, sensitivity: float
) -> float:
    if capacity <= 0:
        return 0.0
    used = max(min(mean, capacity), 0.0)
    spread = max(min(std_dev, capacity), 0.0)
    mu = _clamp((used + max(demand, 0.0)) / capacity)
    sigma = _clamp((spread / capacity) ** (1 / sensitivity) * margin)
    return (1.0 - (mu + sigma) / 2) * float(MAX_NODE_SCORE)


def resource_risk_score_rows(
    mean: Floats, std_dev: Floats, demand: Floats, capacity: Floats, margin: float, sens: float
) -> Floats:
    safe = np.where(capacity <= 0, 1.0, capacity)
    used = np.clip(np.minimum(mean, capacity), 0.0, None)
    spread = np.clip(np.minimum(std_dev, capacity), 0.0, None)
    mu = np.clip((used + np.maximum(demand, 0.0)) / safe, 0.0, 1.0)
    sigma = np.clip((spread / safe) ** (1 / sens) * margin, 0.0, 1.0)
    score: Floats = np.where(capacity <= 0, 0.0, (1.0 - (mu + sigma) / 2) * float(MAX_NODE_SCORE))
    return score


def combine_risk_scores(cpu: float | None, memory: float | None) -> int:
    """None where a resource has no measurement; 0 when neither has."""
    if cpu is not None and memory is not None:
        return _round(min(cpu, memory))
    return _round(max(cpu or 0.0, memory or 0.0))


def combine_risk_scores_rows(cpu: Floats, memory: Floats) -> Ints:
    """NaN where a resource has no measurement."""
    both = np.minimum(cpu, memory)
    one = np.fmax(np.nan_to_num(cpu, nan=0.0), np.nan_to_num(memory, nan=0.0))
    total = np.where(np.isnan(cpu) | np.isnan(memory), one, both)
    return np.floor(total + 0.5).astype(np.int64)
