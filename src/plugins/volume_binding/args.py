"""VolumeBindingArgs (kubescheduler.config.k8s.io/v1)."""

from __future__ import annotations

from typing import Self

from pydantic import Field
from pydantic import model_validator

from plugins.helpers.resources.shape import UtilizationShapePoint
from scheduler.framework import FieldErrors
from scheduler.framework import Int64
from scheduler.framework import PluginArgs

DEFAULT_BIND_TIMEOUT_SECONDS = 600


class VolumeBindingArgs(PluginArgs):
    """`bindTimeoutSeconds`: how long PreBind waits for the PV controller to finish binding
    and provisioning the pod's claims before the attempt fails.

    `shape` belongs to the StorageCapacityScoring Score, an alpha feature that is off by
    default and not implemented here. As upstream does with the gate off, the field may be
    left out or null, and anything else is refused.
    """

    bind_timeout_seconds: Int64 = Field(
        default=DEFAULT_BIND_TIMEOUT_SECONDS, alias="bindTimeoutSeconds"
    )
    shape: tuple[UtilizationShapePoint, ...] | None = None

    @model_validator(mode="after")
    def _validate(self) -> Self:
        errors = FieldErrors()
        if self.bind_timeout_seconds < 0:
            errors.invalid(
                ("bindTimeoutSeconds",),
                self.bind_timeout_seconds,
                "invalid BindTimeoutSeconds, should not be a negative value",
            )
        if self.shape is not None:
            # Shown as upstream shows its internal type, whose fields have no JSON names.
            points = [{"Utilization": p.utilization, "Score": p.score} for p in self.shape]
            errors.invalid(
                ("shape",),
                points,
                "unexpected field `shape`, remove it or turn on the feature gate "
                "StorageCapacityScoring",
            )
        errors.raise_if_any(type(self).__name__)
        return self
