"""The progress line of `simulate` on a terminal: bound pods, rate and time left."""

from __future__ import annotations

import sys
from typing import TextIO

from rich.console import Console
from rich.progress import BarColumn
from rich.progress import MofNCompleteColumn
from rich.progress import Progress
from rich.progress import ProgressColumn
from rich.progress import Task
from rich.progress import TaskID
from rich.progress import TextColumn
from rich.progress import TimeElapsedColumn
from rich.progress import TimeRemainingColumn
from rich.text import Text


class PodRateColumn(ProgressColumn):
    """Pods bound per second, over rich's recent-speed window."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text("-- pods/s" if speed is None else f"{speed:,.0f} pods/s")


class BindingProgress:
    """Called with (bound, total) as the run goes; draws nothing when not on a terminal."""

    def __init__(self, stream: TextIO | None = None) -> None:
        console = Console(file=stream or sys.stderr)
        self.enabled = console.is_terminal
        self._progress = Progress(
            TextColumn("binding"),
            BarColumn(),
            MofNCompleteColumn(),
            PodRateColumn(),
            TimeElapsedColumn(),
            TextColumn("elapsed,"),
            TimeRemainingColumn(),
            TextColumn("left"),
            console=console,
            disable=not self.enabled,
            transient=False,
        )
        self._task: TaskID | None = None

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled or total <= 0:
            return
        if self._task is None:
            self._progress.start()
            self._task = self._progress.add_task("pods", total=total)
        self._progress.update(self._task, completed=done, total=total)

    def finish(self) -> None:
        if self._task is not None:
            self._progress.stop()
