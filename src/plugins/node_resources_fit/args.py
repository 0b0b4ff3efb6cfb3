"""NodeResourcesFitArgs (kubescheduler.config.k8s.io/v1) with upstream defaults and validation."""

from __future__ import annotations

from typing import Final
from typing import Self

from pydantic import Field
from pydantic import field_validator
from pydantic import model_validator

from plugins.helpers.resources.shape import UtilizationShapePoint
from plugins.helpers.resources.shape import validate_shape
from plugins.helpers.resources.spec import DEFAULT_RESOURCES
from plugins.helpers.resources.spec import ResourceSpec
from scheduler.framework import ArgsModel
from scheduler.framework import PluginArgs
from scheduler.framework.field_errors import FieldErrors
from scheduler.framework.field_errors import Loc
from scheduler.objects.names import qualified_name_problems

LEAST_ALLOCATED: Final = "LeastAllocated"
MOST_ALLOCATED: Final = "MostAllocated"
REQUESTED_TO_CAPACITY_RATIO: Final = "RequestedToCapacityRatio"
SCORING_STRATEGY_TYPES: Final = (LEAST_ALLOCATED, MOST_ALLOCATED, REQUESTED_TO_CAPACITY_RATIO)

MAX_RESOURCE_WEIGHT: Final = 100


class RequestedToCapacityRatioParam(ArgsModel):
    shape: tuple[UtilizationShapePoint, ...] = ()


class ScoringStrategy(ArgsModel):
    type: str = ""
    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES
    requested_to_capacity_ratio: RequestedToCapacityRatioParam | None = None

    @field_validator("resources")
    @classmethod
    def _empty_means_default(cls, resources: tuple[ResourceSpec, ...]) -> tuple[ResourceSpec, ...]:
        return resources or DEFAULT_RESOURCES

    @property
    def shape(self) -> tuple[UtilizationShapePoint, ...]:
        ratio = self.requested_to_capacity_ratio
        return ratio.shape if ratio is not None else ()


def _default_strategy() -> ScoringStrategy:
    return ScoringStrategy(type=LEAST_ALLOCATED)


class NodeResourcesFitArgs(PluginArgs):
    ignored_resources: tuple[str, ...] = ()
    ignored_resource_groups: tuple[str, ...] = ()
    scoring_strategy: ScoringStrategy = Field(default_factory=_default_strategy)

    @model_validator(mode="after")
    def _validate(self) -> Self:
        errors = FieldErrors()
        for i, name in enumerate(self.ignored_resources):
            for problem in qualified_name_problems(name):
                errors.invalid(("ignoredResources", i), name, problem)
        for i, group in enumerate(self.ignored_resource_groups):
            if "/" in group:
                errors.invalid(
                    ("ignoredResourceGroups", i), group, "resource group name can't contain '/'"
                )
            for problem in qualified_name_problems(group):
                errors.invalid(("ignoredResourceGroups", i), group, problem)
        _validate_strategy(self.scoring_strategy, ("scoringStrategy",), errors)
        errors.raise_if_any(type(self).__name__)
        return self


def _validate_strategy(strategy: ScoringStrategy, loc: Loc, errors: FieldErrors) -> None:
    if strategy.type not in SCORING_STRATEGY_TYPES:
        errors.not_supported((*loc, "type"), strategy.type, SCORING_STRATEGY_TYPES)
    for i, resource in enumerate(strategy.resources):
        if not 0 < resource.weight <= MAX_RESOURCE_WEIGHT:
            errors.invalid(
                (*loc, "resources", i, "weight"),
                resource.weight,
                f"resource weight of {resource.name} not in valid range (0, {MAX_RESOURCE_WEIGHT}]",
            )
    ratio = strategy.requested_to_capacity_ratio
    ratio_loc = (*loc, "requestedToCapacityRatio")
    if strategy.type == REQUESTED_TO_CAPACITY_RATIO:
        if ratio is None:
            errors.required(ratio_loc, "must be specified when type is RequestedToCapacityRatio")
        else:
            validate_shape(ratio.shape, (*ratio_loc, "shape"), errors)
    elif ratio is not None:
        errors.forbidden(ratio_loc, None, "must be nil when type is not RequestedToCapacityRatio")
