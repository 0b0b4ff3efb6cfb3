"""NodeResourcesBalancedAllocationArgs (kubescheduler.config.k8s.io/v1)."""

from __future__ import annotations

from typing import Self

from pydantic import field_validator
from pydantic import model_validator

from plugins.helpers.resources.spec import DEFAULT_RESOURCES
from plugins.helpers.resources.spec import ResourceSpec
from scheduler.framework import FieldErrors
from scheduler.framework import PluginArgs


class NodeResourcesBalancedAllocationArgs(PluginArgs):
    """Resources whose balance is scored; default cpu and memory. Weights must be 1 (the
    formula is unweighted; the field exists for symmetry with NodeResourcesFit)."""

    resources: tuple[ResourceSpec, ...] = DEFAULT_RESOURCES

    @field_validator("resources")
    @classmethod
    def _empty_means_default(cls, resources: tuple[ResourceSpec, ...]) -> tuple[ResourceSpec, ...]:
        return resources or DEFAULT_RESOURCES

    @model_validator(mode="after")
    def _validate(self) -> Self:
        errors = FieldErrors()
        seen: set[str] = set()
        for i, resource in enumerate(self.resources):
            if resource.name in seen:
                errors.duplicate(("resources", i, "name"), resource.name)
            seen.add(resource.name)
            if resource.weight != 1:
                errors.invalid(("resources", i, "weight"), resource.weight, "must be 1")
        errors.raise_if_any(type(self).__name__)
        return self
