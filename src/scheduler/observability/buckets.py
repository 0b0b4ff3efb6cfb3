"""Histogram bucket layouts, computed the way upstream computes them."""

from __future__ import annotations


def exponential_buckets(start: float, factor: float, count: int) -> tuple[float, ...]:
    """`count` upper bounds: start, start*factor, start*factor**2, ... (+Inf is implied).

    Each bound is the previous one times `factor`, not `start * factor**i`: with a factor
    such as 1.5 the two differ in the last bit, and the `le` labels must match upstream's
    byte for byte so that dashboards and recording rules written for kube-scheduler work.
    """
    if start <= 0:
        raise ValueError(f"exponential buckets need a positive start, got {start}")
    if factor <= 1:
        raise ValueError(f"exponential buckets need a factor above 1, got {factor}")
    if count < 1:
        raise ValueError(f"exponential buckets need at least one bucket, got {count}")
    bounds: list[float] = []
    bound = start
    for _ in range(count):
        bounds.append(bound)
        bound *= factor
    return tuple(bounds)
