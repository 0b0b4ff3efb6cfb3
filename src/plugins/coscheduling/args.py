"""CoschedulingArgs, with scheduler-plugins' names and defaults."""

from __future__ import annotations

from typing import Final
from typing import Self

from pydantic import model_validator

from scheduler.framework import FieldErrors
from scheduler.framework import PluginArgs

DEFAULT_PERMIT_WAITING_TIME_SECONDS: Final = 60
DEFAULT_POD_GROUP_BACKOFF_SECONDS: Final = 0
DEFAULT_POD_GROUP_REJECT_PERCENTAGE: Final = 10


class CoschedulingArgs(PluginArgs):
    """How long a group's members wait at Permit, how long a rejected group backs off, and how
    close to its quorum a group may be for PostFilter to spare its waiting members."""

    permit_waiting_time_seconds: int = DEFAULT_PERMIT_WAITING_TIME_SECONDS
    pod_group_backoff_seconds: int = DEFAULT_POD_GROUP_BACKOFF_SECONDS
    pod_group_reject_percentage: int = DEFAULT_POD_GROUP_REJECT_PERCENTAGE

    @model_validator(mode="after")
    def _validate(self) -> Self:
        errors = FieldErrors()
        if self.permit_waiting_time_seconds <= 0:
            errors.invalid(
                ("permitWaitingTimeSeconds",),
                self.permit_waiting_time_seconds,
                "must be greater than 0",
            )
        if self.pod_group_backoff_seconds < 0:
            errors.invalid(
                ("podGroupBackoffSeconds",), self.pod_group_backoff_seconds, "must not be negative"
            )
        if not 0 <= self.pod_group_reject_percentage <= 100:
            errors.invalid(
                ("podGroupRejectPercentage",),
                self.pod_group_reject_percentage,
                "not in valid range [0, 100]",
            )
        errors.raise_if_any(type(self).__name__)
        return self
