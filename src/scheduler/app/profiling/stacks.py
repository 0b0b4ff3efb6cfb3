"""The stacks a profile is made of: a thread's frames, and an asyncio task's chain of awaits.

A suspended task has no thread stack of its own. Its outermost coroutine awaits another, which
awaits another, down to the future it waits for; that chain (`cr_await`) is the task's stack.
"""

from __future__ import annotations

import asyncio
import os
from types import CoroutineType
from types import FrameType
from types import GeneratorType
from typing import Any

from scheduler.app.profiling.pprof_format import Frame
from scheduler.app.profiling.pprof_format import Stack

# Where a thread waits without using the CPU: the event loop's poll, a condition or a lock, a
# queue. A sample whose innermost Python frame is one of these is idle time, which a CPU
# profile leaves out (the C call below it does not show as a frame).
_IDLE_FRAMES = frozenset(
    {
        ("selectors.py", "select"),
        ("threading.py", "wait"),
        ("threading.py", "_wait_for_tstate_lock"),
        ("queue.py", "get"),
    }
)


def _frame(frame: FrameType) -> Frame:
    code = frame.f_code
    # pprof shows a function named "<module>" as unknown; name the module instead.
    name = code.co_qualname
    if name == "<module>":
        name = f"module {os.path.basename(code.co_filename)}"
    return Frame(name, code.co_filename, frame.f_lineno or 0, code.co_firstlineno)


def thread_stack(frame: FrameType | None) -> Stack:
    """The frames from `frame` (the innermost) out to the thread's first."""
    frames: list[Frame] = []
    while frame is not None:
        frames.append(_frame(frame))
        frame = frame.f_back
    return tuple(frames)


def is_idle(stack: Stack) -> bool:
    if not stack:
        return True
    leaf = stack[0]
    # By the plain name: `select` is a method of whichever selector class the loop uses.
    return (os.path.basename(leaf.filename), leaf.function.rsplit(".", 1)[-1]) in _IDLE_FRAMES


def task_stack(task: asyncio.Task[Any]) -> Stack:
    """The task's chain of awaits, innermost first (empty once the task is done)."""
    frames: list[Frame] = []
    awaited: Any = task.get_coro()
    while awaited is not None:
        frame = _suspended_frame(awaited)
        if frame is None:
            break
        frames.append(_frame(frame))
        awaited = getattr(awaited, "cr_await", None) or getattr(awaited, "gi_yieldfrom", None)
    frames.reverse()
    return tuple(frames)


def _suspended_frame(awaitable: Any) -> FrameType | None:
    # Futures and other awaitables end the chain: they have no frame.
    if isinstance(awaitable, CoroutineType):
        return awaitable.cr_frame
    if isinstance(awaitable, GeneratorType):
        return awaitable.gi_frame
    return None
