"""The one exception hierarchy. Outcomes are Status values; these are for infrastructure."""

from __future__ import annotations


class SchedulerError(Exception):
    """Base of every exception kube-pyscheduler raises on purpose."""


class ConfigError(SchedulerError):
    """Invalid configuration; the message names the field path."""


class PluginLoadError(SchedulerError):
    """A plugin could not be found, imported or constructed."""


class APIError(SchedulerError):
    """The cluster API answered with an error status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"{status}: {message}")
        self.status = status
        self.text = message


class NotFoundError(APIError):
    def __init__(self, message: str) -> None:
        super().__init__(404, message)


class ConflictError(APIError):
    def __init__(self, message: str) -> None:
        super().__init__(409, message)


class GoneError(APIError):
    """410: the requested resourceVersion is older than the history the server keeps; relist."""

    def __init__(self, message: str) -> None:
        super().__init__(410, message)
