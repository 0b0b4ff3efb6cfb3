"""VolumeBindingArgs (kubescheduler.config.k8s.io/v1)."""

from __future__ import annotations

from typing import Self

from pydantic import Field
from pydantic import model_validator

from scheduler.framework import FieldErrors
from scheduler.framework import Int64
from scheduler.framework import PluginArgs

DEFAULT_BIND_TIMEOUT_SECONDS = 600


class VolumeBindingArgs(PluginArgs):
    """`bindTimeoutSeconds`: how long PreBind waits for the PV controller to finish binding
    and provisioning the pod's claims before the attempt fails."""

    bind_timeout_seconds: Int64 = Field(
        default=DEFAULT_BIND_TIMEOUT_SECONDS, alias="bindTimeoutSeconds"
    )

    @model_validator(mode="after")
    def _validate(self) -> Self:
        errors = FieldErrors()
        if self.bind_timeout_seconds < 0:
            errors.invalid(
                ("bindTimeoutSeconds",),
                self.bind_timeout_seconds,
                "invalid BindTimeoutSeconds, should not be a negative value",
            )
        errors.raise_if_any(type(self).__name__)
        return self
