"""The one exception hierarchy. Outcomes are Status values; these are for infrastructure."""

from __future__ import annotations


class SchedulerError(Exception):
    """Base of every exception kube-pyscheduler raises on purpose."""


class ConfigError(SchedulerError):
    """Invalid configuration; the message names the field path."""


class PluginLoadError(SchedulerError):
    """A plugin could not be found, imported or constructed."""


class APIError(SchedulerError):
    """The cluster API answered with an error status (0: no answer at all).

    `retry_after` is the server's Retry-After, in seconds, when it sent one (429 and 503
    answers carry it while the API server sheds load); `connection_refused` says that no answer
    came because nothing listened (an API server restarting)."""

    connection_refused = False

    def __init__(self, status: int, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(f"{status}: {message}")
        self.status = status
        self.text = message
        self.retry_after = retry_after

    @property
    def retriable(self) -> bool:
        """Whether the same request may succeed later: no answer, too many requests, or a
        server-side failure."""
        return self.status in (0, 429) or self.status >= 500


def error_text(error: BaseException) -> str:
    """A failure as a Status, an Event or a pod condition says it: an API error in the server's
    own words, as client-go's errors read (the HTTP status stays in logs and metrics), any
    other exception as itself."""
    return error.text if isinstance(error, APIError) else str(error)


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
