"""A point of a utilization-to-score shape (v1 UtilizationShapePoint), as both
NodeResourcesFit's RequestedToCapacityRatio and VolumeBinding's capacity scoring spell it."""

from __future__ import annotations

from scheduler.framework import ArgsModel
from scheduler.framework import Int32


class UtilizationShapePoint(ArgsModel):
    utilization: Int32 = 0
    score: Int32 = 0
