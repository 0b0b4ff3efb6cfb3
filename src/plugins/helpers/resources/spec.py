"""A resource the scoring strategies take into account, and its weight."""

from __future__ import annotations

from typing import Final

from pydantic import field_validator

from scheduler.framework import ArgsModel
from scheduler.framework import Int64


class ResourceSpec(ArgsModel):
    """A resource taken into account by scoring, and its weight (0 or unset means 1)."""

    name: str
    weight: Int64 = 1

    @field_validator("weight")
    @classmethod
    def _unset_weight_is_one(cls, weight: int) -> int:
        return 1 if weight == 0 else weight


DEFAULT_RESOURCES: Final = (
    ResourceSpec(name="cpu", weight=1),
    ResourceSpec(name="memory", weight=1),
)
