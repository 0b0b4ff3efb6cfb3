"""What the runtime reports about plugin execution; implemented by scheduler.observability."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

# Adds one plugin's evaluations to its counter.
EvaluationCounter = Callable[[int], None]


class RuntimeMetrics(Protocol):
    def extension_point_duration(
        self, extension_point: str, status: str, profile: str, seconds: float
    ) -> None: ...

    def plugin_execution_duration(
        self, plugin: str, extension_point: str, status: str, seconds: float, calls: int = 1
    ) -> None: ...

    def permit_wait(self, result: str, seconds: float) -> None: ...

    def plugin_evaluation(
        self, plugin: str, extension_point: str, profile: str, count: int = 1
    ) -> None: ...

    def plugin_evaluation_counter(
        self, plugin: str, extension_point: str, profile: str
    ) -> EvaluationCounter:
        """What `plugin_evaluation` adds to for these labels, to keep and call per cycle."""
        ...

    def batch_attempt(self, profile: str, result: str) -> None: ...

    def batch_cache_flushed(self, profile: str, reason: str) -> None: ...

    def node_hint_duration(self, hinted: bool, profile: str, seconds: float) -> None: ...

    def store_schedule_results_duration(self, profile: str, seconds: float) -> None: ...


class NoMetrics:
    """Used where nothing is scraped (tests, `simulate` without a registry)."""

    def extension_point_duration(
        self, extension_point: str, status: str, profile: str, seconds: float
    ) -> None:
        return None

    def plugin_execution_duration(
        self, plugin: str, extension_point: str, status: str, seconds: float, calls: int = 1
    ) -> None:
        return None

    def permit_wait(self, result: str, seconds: float) -> None:
        return None

    def plugin_evaluation(
        self, plugin: str, extension_point: str, profile: str, count: int = 1
    ) -> None:
        return None

    def plugin_evaluation_counter(
        self, plugin: str, extension_point: str, profile: str
    ) -> EvaluationCounter:
        return _count_nothing

    def batch_attempt(self, profile: str, result: str) -> None:
        return None

    def batch_cache_flushed(self, profile: str, reason: str) -> None:
        return None

    def node_hint_duration(self, hinted: bool, profile: str, seconds: float) -> None:
        return None

    def store_schedule_results_duration(self, profile: str, seconds: float) -> None:
        return None


def _count_nothing(count: int) -> None:
    return None
