"""CPU time and peak memory of a running process, read from /proc (Linux only)."""

from __future__ import annotations

import os
from pathlib import Path

_CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
# Fields after the parenthesised command name: state is index 0, so utime (field 14 of the
# whole line) is index 11 and stime index 12.
_UTIME_INDEX = 11
_STIME_INDEX = 12


def cpu_seconds(pid: int) -> float:
    """User plus system CPU seconds the process has used so far (threads included)."""
    raw = Path(f"/proc/{pid}/stat").read_text()
    # The command name may contain spaces and parentheses: split after the last ')'.
    fields = raw[raw.rindex(")") + 2 :].split()
    ticks = int(fields[_UTIME_INDEX]) + int(fields[_STIME_INDEX])
    return ticks / _CLOCK_TICKS


def peak_rss_bytes(pid: int) -> int:
    """VmHWM: the highest resident set size the process has reached."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            value, unit = line.split()[1:3]
            if unit != "kB":
                raise ValueError(f"unexpected VmHWM unit {unit!r} for pid {pid}")
            return int(value) * 1024
    raise ValueError(f"/proc/{pid}/status has no VmHWM line")
