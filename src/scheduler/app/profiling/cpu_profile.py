"""`/debug/pprof/profile`: where the process spends its CPU, sampled for a number of seconds.

Go's runtime interrupts a busy thread every 10 ms and records its stack. Python offers no such
signal for every thread, so a sampling thread reads every other thread's current stack
(`sys._current_frames`) every 10 ms instead, and leaves out the threads that wait (the event
loop in its poll, a worker on its queue, see `stacks.is_idle`). Each kept stack counts one
sample and one period of CPU, so `go tool pprof` shows the same `samples` and `cpu` columns
as for kube-scheduler. The sampling thread takes the interpreter lock a hundred times a
second while a profile runs, and never otherwise.

One profile runs at a time, as Go's runtime allows; a second request is refused with Go's
message.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from typing import Final

from scheduler.app.profiling.pprof_format import ProfileBuilder
from scheduler.app.profiling.stacks import is_idle
from scheduler.app.profiling.stacks import thread_stack

SAMPLE_INTERVAL_S: Final = 0.01
DEFAULT_SECONDS: Final = 30


class ProfilerBusyError(Exception):
    """A CPU profile is already being taken."""

    def __init__(self) -> None:
        super().__init__("cpu profiling already in use")


class CpuProfiler:
    def __init__(self, interval_s: float = SAMPLE_INTERVAL_S) -> None:
        self._interval_s = interval_s
        self._busy = threading.Lock()

    async def profile(self, seconds: float) -> bytes:
        """Sample for `seconds`, then return the gzipped pprof profile."""
        if not self._busy.acquire(blocking=False):
            raise ProfilerBusyError
        try:
            period_ns = int(self._interval_s * 1e9)
            builder = ProfileBuilder(
                [("samples", "count"), ("cpu", "nanoseconds")], ("cpu", "nanoseconds", period_ns)
            )
            stop = threading.Event()
            sampler = threading.Thread(
                target=self._sample,
                args=(builder, stop, period_ns),
                name="cpu-profile",
                daemon=True,
            )
            started_ns, started = time.time_ns(), time.monotonic_ns()
            sampler.start()
            try:
                await asyncio.sleep(seconds)
            finally:
                stop.set()
                # The sampler ends within one interval; joining it here blocks no longer.
                sampler.join()
            return builder.encode(started_ns, time.monotonic_ns() - started)
        finally:
            self._busy.release()

    def _sample(self, builder: ProfileBuilder, stop: threading.Event, period_ns: int) -> None:
        me = threading.get_ident()
        while not stop.wait(self._interval_s):
            for ident, frame in sys._current_frames().items():
                if ident == me:
                    continue
                stack = thread_stack(frame)
                if not is_idle(stack):
                    builder.add(stack, (1, period_ns))
