"""The daemon's start-up steps as log lines at -v=2, each with the seconds since the process
began (the interpreter's own start and every import included), so a slow start shows which
step took the time. The informers add one line per list (`cluster/informer.py`).

The process's age comes from the kernel's record of when it started (Linux's /proc); elsewhere
the lines carry none.
"""

from __future__ import annotations

import os
import time

from structlog.typing import FilteringBoundLogger

from scheduler.observability import log_v

# klog verbosity of the start-up lines, as kube-scheduler logs its start-up steps at V(2).
V_STARTUP = 2
# /proc/<pid>/stat fields after the command name, which is in parentheses and may hold spaces:
# the 22nd field (start time, in clock ticks since boot) is the 20th of those.
_START_TIME_FIELD = 19


def process_age() -> float | None:
    """Seconds since this process started, or None if the system does not say."""
    try:
        with open("/proc/self/stat", "rb") as stat:
            record = stat.read()
        ticks = int(record.rsplit(b")", 1)[1].split()[_START_TIME_FIELD])
        started = ticks / os.sysconf("SC_CLK_TCK")
        return round(time.clock_gettime(time.CLOCK_BOOTTIME) - started, 3)
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def mark(logger: FilteringBoundLogger, step: str, **fields: object) -> None:
    """Log that start-up reached `step` (at -v=2)."""
    log_v(logger, V_STARTUP, step, since_process_start=process_age(), **fields)
