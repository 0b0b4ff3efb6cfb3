"""DynamicResourcesArgs (kubescheduler.config.k8s.io/v1)."""

from __future__ import annotations

from typing import Final, Self

from pydantic import model_validator

from plugins.node_resources_fit.field_errors import FieldErrors
from scheduler.framework import PluginArgs
from scheduler.framework.durations import Duration

DEFAULT_FILTER_TIMEOUT_SECONDS: Final = 10.0


class DynamicResourcesArgs(PluginArgs):
    """`filterTimeout`: how long Filter may search for devices on one node before it gives
    that node up ("timed out trying to allocate devices"); 0 means no limit."""

    filter_timeout: Duration = DEFAULT_FILTER_TIMEOUT_SECONDS

    @model_validator(mode="after")
    def _validate(self) -> Self:
        errors = FieldErrors()
        if self.filter_timeout < 0:
            errors.invalid(("filterTimeout",), self.filter_timeout, "must be zero or positive")
        errors.raise_if_any(type(self).__name__)
        return self
