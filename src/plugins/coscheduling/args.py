"""CoschedulingArgs, with scheduler-plugins' names, defaults and validation texts."""

from __future__ import annotations

from typing import Final
from typing import Self

from pydantic import model_validator

from scheduler.framework import FieldErrors
from scheduler.framework import PluginArgs

DEFAULT_PERMIT_WAITING_TIME_SECONDS: Final = 60
DEFAULT_POD_GROUP_BACKOFF_SECONDS: Final = 0
DEFAULT_POD_GROUP_REJECT_PERCENTAGE: Final = 10
_PERCENT: Final = "must be between 0 and 100"
# What a group waits at Permit when neither it nor the args say (upstream's DefaultWaitTime).
DEFAULT_WAIT_SECONDS: Final = 60.0
# How long upstream's "permitted" cache keeps an entry added for 0 seconds: go-cache reads 0
# as "the cache's default expiration", 3 s for that cache.
PERMITTED_CACHE_DEFAULT_SECONDS: Final = 3.0


class CoschedulingArgs(PluginArgs):
    """How long a group's members wait at Permit, how long a rejected group backs off, and how
    close to its quorum a group may be for PostFilter to spare its waiting members."""

    permit_waiting_time_seconds: int = DEFAULT_PERMIT_WAITING_TIME_SECONDS
    pod_group_backoff_seconds: int = DEFAULT_POD_GROUP_BACKOFF_SECONDS
    pod_group_reject_percentage: int = DEFAULT_POD_GROUP_REJECT_PERCENTAGE

    @model_validator(mode="after")
    def _validate(self) -> Self:
        # Upstream's texts, "greater than 0" included where 0 is accepted.
        wait, backoff = self.permit_waiting_time_seconds, self.pod_group_backoff_seconds
        percentage = self.pod_group_reject_percentage
        checks = (
            ("permitWaitingTimeSeconds", wait, wait >= 0, "must be greater than 0"),
            ("podGroupBackoffSeconds", backoff, backoff >= 0, "must be greater than 0"),
            ("podGroupRejectPercentage", percentage, 0 <= percentage <= 100, _PERCENT),
        )
        errors = FieldErrors()
        for name, value, valid, message in checks:
            if not valid:
                errors.invalid((name,), value, message)
        errors.raise_if_any(type(self).__name__)
        return self

    @property
    def default_wait_seconds(self) -> float:
        """The Permit wait of a group that sets no scheduleTimeoutSeconds: 0 means upstream's
        default wait."""
        return float(self.permit_waiting_time_seconds or DEFAULT_WAIT_SECONDS)

    @property
    def permitted_for_seconds(self) -> float:
        """How long a passed minResources check is kept: permitWaitingTimeSeconds, whatever
        the group's own timeout, as upstream keeps it."""
        return float(self.permit_waiting_time_seconds or PERMITTED_CACHE_DEFAULT_SECONDS)
