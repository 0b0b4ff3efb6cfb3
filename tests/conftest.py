"""Checks that hold for every test: no asyncio task may end with an exception nobody retrieved."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator
from typing import Any

import pytest

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
def logging_left_as_found() -> Iterator[None]:
    """Commands under test configure process-wide logging; undo it for the next test."""
    yield
    reset_logging()
