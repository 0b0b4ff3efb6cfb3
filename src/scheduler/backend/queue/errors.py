"""Exceptions of the scheduling queue."""

from __future__ import annotations

from scheduler.framework.errors import SchedulerError


class QueueClosed(SchedulerError):  # noqa: N818 - the public name callers catch
    """The queue was closed; no more pods will be handed out."""
