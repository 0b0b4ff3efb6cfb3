"""DynamicResourcesArgs (kubescheduler.config.k8s.io/v1)."""

from __future__ import annotations

from typing import Final
from typing import Self

from pydantic import model_validator

from scheduler.framework import FieldErrors
from scheduler.framework import PluginArgs
from scheduler.framework.durations import Duration
from scheduler.framework.durations import format_duration

DEFAULT_FILTER_TIMEOUT_SECONDS: Final = 10.0
DEFAULT_BINDING_TIMEOUT_SECONDS: Final = 600.0


class DynamicResourcesArgs(PluginArgs):
    """`filterTimeout`: how long Filter may search for devices on one node before it gives
    the attempt up with an Error ("node <node>: timed out trying to allocate devices"), for a
    retry after backoff; 0 means no limit.

    `bindingTimeout`: how long PreBind waits for the binding conditions of devices that
    declare them, counted from the allocation; past it the claim is freed for another try.
    """

    filter_timeout: Duration = DEFAULT_FILTER_TIMEOUT_SECONDS
    binding_timeout: Duration = DEFAULT_BINDING_TIMEOUT_SECONDS

    @model_validator(mode="after")
    def _validate(self) -> Self:
        errors = FieldErrors()
        # Shown as Go prints a duration ("-1s", "500ms"), in upstream's words.
        if self.filter_timeout < 0:
            errors.invalid(
                ("filterTimeout",), format_duration(self.filter_timeout), "must be zero or positive"
            )
        if self.binding_timeout < 1:
            errors.invalid(
                ("bindingTimeout",),
                format_duration(self.binding_timeout),
                "must be at least 1 second",
            )
        errors.raise_if_any(type(self).__name__)
        return self
