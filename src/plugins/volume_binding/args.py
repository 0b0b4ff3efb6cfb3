"""VolumeBindingArgs (kubescheduler.config.k8s.io/v1)."""

from __future__ import annotations

from typing import Any
from typing import Final
from typing import Self

from pydantic import Field
from pydantic import ValidationInfo
from pydantic import model_validator

from plugins.helpers.resources.shape import MAX_CUSTOM_PRIORITY_SCORE
from plugins.helpers.resources.shape import MAX_UTILIZATION
from plugins.helpers.resources.shape import UtilizationShapePoint
from plugins.helpers.resources.shape import validate_shape
from scheduler.framework import FieldErrors
from scheduler.framework import Int64
from scheduler.framework import PluginArgs
from scheduler.framework.args import gate_enabled

DEFAULT_BIND_TIMEOUT_SECONDS = 600

STORAGE_CAPACITY_SCORING: Final = "StorageCapacityScoring"

# With the gate on and no shape given: the emptier a node's storage, the higher its score.
DEFAULT_SHAPE: Final = (
    UtilizationShapePoint(utilization=0, score=MAX_CUSTOM_PRIORITY_SCORE),
    UtilizationShapePoint(utilization=MAX_UTILIZATION, score=0),
)


class VolumeBindingArgs(PluginArgs):
    """`bindTimeoutSeconds`: how long PreBind waits for the PV controller to finish binding
    and provisioning the pod's claims before the attempt fails.

    `shape` maps how full a node's storage of a class would be with the pod's volumes to a
    score: it belongs to the StorageCapacityScoring feature gate (alpha, off by default). With
    the gate on it defaults to `DEFAULT_SHAPE` and is checked as NodeResourcesFit's
    RequestedToCapacityRatio shape is; with it off, as upstream does, the field may be left out
    or null, and anything else is refused.
    """

    bind_timeout_seconds: Int64 = Field(
        default=DEFAULT_BIND_TIMEOUT_SECONDS, alias="bindTimeoutSeconds"
    )
    shape: tuple[UtilizationShapePoint, ...] | None = None

    @model_validator(mode="before")
    @classmethod
    def _default_shape(cls, data: Any, info: ValidationInfo) -> Any:
        # Upstream defaults an empty shape as it does a missing one.
        if not isinstance(data, dict) or data.get("shape"):
            return data
        if not gate_enabled(info, STORAGE_CAPACITY_SCORING, default=False):
            return data
        return {**data, "shape": DEFAULT_SHAPE}

    @model_validator(mode="after")
    def _validate(self, info: ValidationInfo) -> Self:
        errors = FieldErrors()
        if self.bind_timeout_seconds < 0:
            errors.invalid(
                ("bindTimeoutSeconds",),
                self.bind_timeout_seconds,
                "invalid BindTimeoutSeconds, should not be a negative value",
            )
        if gate_enabled(info, STORAGE_CAPACITY_SCORING, default=False):
            validate_shape(self.shape or (), ("shape",), errors)
        elif self.shape is not None:
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
