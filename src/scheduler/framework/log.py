"""Loggers for plugins: the scheduler's structured logs, in its configured format.

Log a constant message and key/value pairs, with the keys the scheduler uses (`pod` as
"namespace/name", `node`, `err`):

    log = get_logger(__name__)
    log.info("Cache refreshed", entries=len(cache))

Debug records appear from `-v=4`. The scheduler configures the format (`--logging-format`)
and the verbosity; a plugin never configures logging itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import cast

from scheduler.framework.structlog_import import import_structlog

if TYPE_CHECKING:
    from structlog.typing import FilteringBoundLogger

structlog = import_structlog()


def get_logger(name: str) -> FilteringBoundLogger:
    """A logger whose records carry `logger=name`; safe to call at import time."""
    # The name reaches the logger factory when the logger is first used.
    return cast("FilteringBoundLogger", structlog.get_logger(name))
