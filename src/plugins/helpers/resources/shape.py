"""A utilization-to-score shape (v1 UtilizationShapePoint list), as both NodeResourcesFit's
RequestedToCapacityRatio and VolumeBinding's storage capacity scoring spell, check and apply it.

Scores are given on upstream's 0..10 scale (MaxCustomPriorityScore) and scaled x10 to the
0..100 node score; utilization is a percentage, 0..100.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

from scheduler.framework import MAX_NODE_SCORE
from scheduler.framework import ArgsModel
from scheduler.framework import Int32
from scheduler.framework.field_errors import FieldErrors
from scheduler.framework.field_errors import Loc

MAX_CUSTOM_PRIORITY_SCORE: Final = 10
MAX_UTILIZATION: Final = 100

Point = tuple[int, int]
"""(utilization, score) of one point of a shape."""


class UtilizationShapePoint(ArgsModel):
    utilization: Int32 = 0
    score: Int32 = 0


def validate_shape(shape: Sequence[UtilizationShapePoint], loc: Loc, errors: FieldErrors) -> None:
    """Upstream's rules for a shape: at least one point, utilizations strictly increasing and
    in 0..100, scores in 0..10."""
    if not shape:
        errors.required(loc, "at least one point must be specified")
        return
    for i in range(1, len(shape)):
        if shape[i - 1].utilization >= shape[i].utilization:
            errors.invalid(
                (*loc, i, "utilization"),
                shape[i].utilization,
                "values must be sorted in increasing order",
            )
            break
    for i, point in enumerate(shape):
        if not 0 <= point.utilization <= MAX_UTILIZATION:
            errors.invalid(
                (*loc, i, "utilization"),
                point.utilization,
                f"not in valid range [0, {MAX_UTILIZATION}]",
            )
        if not 0 <= point.score <= MAX_CUSTOM_PRIORITY_SCORE:
            errors.invalid(
                (*loc, i, "score"),
                point.score,
                f"not in valid range [0, {MAX_CUSTOM_PRIORITY_SCORE}]",
            )


def scaled_shape(points: Sequence[UtilizationShapePoint]) -> tuple[Point, ...]:
    """A shape's points with scores moved from the 0..10 config scale to the 0..100 node
    scale."""
    factor = MAX_NODE_SCORE // MAX_CUSTOM_PRIORITY_SCORE
    return tuple((point.utilization, point.score * factor) for point in points)


def broken_linear(shape: Sequence[Point], utilization: int) -> int:
    """The shape's value at `utilization`: first score below the first point, last score past
    the last point, linear in between (with Go's truncating integer division)."""
    for i, (point_utilization, point_score) in enumerate(shape):
        if utilization <= point_utilization:
            if i == 0:
                return point_score
            previous_utilization, previous_score = shape[i - 1]
            return previous_score + _truncating_div(
                (point_score - previous_score) * (utilization - previous_utilization),
                point_utilization - previous_utilization,
            )
    return shape[-1][1]


def utilization(requested: int, capacity: int) -> int:
    """`requested` as a whole percentage of `capacity` (100 past it); capacity must be > 0."""
    if requested > capacity:
        return MAX_UTILIZATION
    return requested * MAX_UTILIZATION // capacity


def go_round(value: float) -> int:
    """Round half away from zero, exactly as Go's math.Round (value is never negative here)."""
    floor = math.floor(value)
    return floor + 1 if value - floor >= 0.5 else floor


def _truncating_div(numerator: int, denominator: int) -> int:
    """Integer division rounding toward zero, as Go's `/` on int64 does."""
    quotient = abs(numerator) // abs(denominator)
    return quotient if (numerator >= 0) == (denominator > 0) else -quotient
