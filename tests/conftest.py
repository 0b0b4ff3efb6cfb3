"""Checks that hold for every test: no asyncio task may end with an exception nobody retrieved,
and none may still be running when the test ends."""

from __future__ import annotations

import asyncio
import asyncio.runners
import gc
import io
import json
from collections.abc import Iterator
from typing import Any

import pytest

from scheduler.observability import configure_logging
from scheduler.observability import reset_logging

_UNRETRIEVED = "exception was never retrieved"


@pytest.fixture(autouse=True)
def no_unretrieved_task_exceptions(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Fail the test if a task or future was dropped with its exception unread.

    asyncio reports such a task through the loop's exception handler when the task is garbage
    collected; collecting at teardown makes that happen while the test can still fail.
    """
    leaked: list[str] = []
    original = asyncio.BaseEventLoop.call_exception_handler

    def record(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if _UNRETRIEVED in str(context.get("message", "")):
            leaked.append(f"{context.get('message')}: {context.get('exception')!r}")
        original(loop, context)  # type: ignore[arg-type]

    monkeypatch.setattr(asyncio.BaseEventLoop, "call_exception_handler", record)
    yield
    gc.collect()
    assert not leaked, f"task exceptions nobody retrieved: {leaked}"


@pytest.fixture(autouse=True)
def no_task_left_running(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Fail the test if a task it started was still running when its event loop closed.

    A long-lived task belongs to someone who ends it (`Scheduler.stop`, a harness, the test);
    one left behind would be cancelled silently by the loop's runner and could hide a missing
    stop. The runner's own clean-up is watched to see what it still had to cancel.
    """
    left: list[str] = []
    original = asyncio.runners._cancel_all_tasks  # type: ignore[attr-defined]

    def cancel_all_tasks(loop: asyncio.AbstractEventLoop) -> None:
        left.extend(sorted(_described(task) for task in asyncio.all_tasks(loop)))
        original(loop)

    monkeypatch.setattr(asyncio.runners, "_cancel_all_tasks", cancel_all_tasks)
    yield
    assert not left, f"tasks still running when the test ended: {left}"


def _described(task: asyncio.Task[Any]) -> str:
    coroutine = task.get_coro()
    return f"{task.get_name()} ({getattr(coroutine, '__qualname__', coroutine)})"


@pytest.fixture(autouse=True)
def logging_left_as_found() -> Iterator[None]:
    """Commands under test configure process-wide logging; undo it for the next test."""
    yield
    reset_logging()


class CapturedLogs:
    """The scheduler's log records, as the JSON lines `--logging-format=json` writes."""

    def __init__(self, stream: io.StringIO) -> None:
        self._stream = stream

    def records(self, level: str | None = None) -> list[dict[str, Any]]:
        records = [json.loads(line) for line in self._stream.getvalue().splitlines()]
        return [r for r in records if level is None or r.get("level") == level]

    @property
    def text(self) -> str:
        return self._stream.getvalue()


@pytest.fixture
def captured_logs() -> Iterator[CapturedLogs]:
    """Configure logging (JSON, -v=0) into a buffer for the test to read."""
    stream = io.StringIO()
    configure_logging("json", 0, stream, cache_loggers=False)
    yield CapturedLogs(stream)
    reset_logging()
