"""`/debug/pprof/goroutine`: what every asyncio task and every thread is doing right now.

kube-scheduler's goroutine profile is how an operator finds a stuck binding or a watch that
never returns; our tasks are its goroutines, plus the process's threads. As in Go, `debug=0`
(the default) serves a pprof profile counting the tasks and threads by stack, `debug=1` the same
counts as text, and `debug=2` every task and thread with its own stack, innermost frame last as
in a Python traceback.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections import Counter
from dataclasses import dataclass
from typing import Any

from scheduler.app.profiling.pprof_format import ProfileBuilder
from scheduler.app.profiling.pprof_format import Stack
from scheduler.app.profiling.stacks import task_stack
from scheduler.app.profiling.stacks import thread_stack


@dataclass(frozen=True, slots=True)
class Routine:
    """One asyncio task or one thread, with its stack innermost first."""

    kind: str
    name: str
    state: str
    stack: Stack


def routines() -> list[Routine]:
    """Every task of the running loop, then every thread; called on the loop's thread."""
    running = asyncio.current_task()
    found = [
        Routine("task", task.get_name(), _task_state(task, running), task_stack(task))
        for task in sorted(asyncio.all_tasks(), key=lambda t: t.get_name())
    ]
    names = {thread.ident: thread.name for thread in threading.enumerate()}
    current = threading.get_ident()
    for ident, frame in sorted(sys._current_frames().items()):
        state = "running" if ident == current else "thread"
        found.append(Routine("thread", names.get(ident, str(ident)), state, thread_stack(frame)))
    return found


def _task_state(task: asyncio.Task[Any], running: asyncio.Task[Any] | None) -> str:
    if task is running:
        return "running"
    return "done" if task.done() else "waiting"


def task_profile(found: list[Routine]) -> bytes:
    """`debug=0`: a pprof profile with one sample per distinct stack, valued by its count."""
    builder = ProfileBuilder([("goroutine", "count")], ("goroutine", "count", 1))
    for routine in found:
        builder.add(routine.stack, (1,))
    return builder.encode(time.time_ns(), 0)


def task_text(found: list[Routine], debug: int) -> str:
    """`debug=1`: counts by stack, most common first; `debug>=2`: each task and thread."""
    if debug >= 2:
        return "\n".join(f"{r.kind} {r.name} [{r.state}]:\n{_traceback(r.stack)}" for r in found)
    counts = Counter(r.stack for r in found)
    lines = [f"goroutine profile: total {len(found)}"]
    for stack, count in counts.most_common():
        lines.append(f"{count} @\n{_traceback(stack)}")
    return "\n".join(lines)


def _traceback(stack: Stack) -> str:
    return "".join(
        f'  File "{f.filename}", line {f.line}, in {f.function}\n' for f in reversed(stack)
    )
