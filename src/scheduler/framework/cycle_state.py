"""Per-cycle scratch space shared by the plugins of one scheduling attempt."""

from __future__ import annotations

from typing import Any
from typing import Protocol
from typing import TypeVar
from typing import runtime_checkable

T = TypeVar("T")


@runtime_checkable
class Cloneable(Protocol):
    """State a plugin wants copied (not shared) when the cycle state is cloned."""

    def clone(self) -> Any: ...


class CycleState:
    """Key/value store for one cycle; `clone` deep-copies values that know how to clone."""

    __slots__ = (
        "_data",
        "pods_to_activate",
        "record_plugin_metrics",
        "skip_filter_plugins",
        "skip_pre_bind_plugins",
        "skip_score_plugins",
    )

    def __init__(self) -> None:
        self._data: dict[str, Any] = {}
        self.skip_filter_plugins: set[str] = set()
        self.skip_score_plugins: set[str] = set()
        # PreBind plugins whose PreBindPreFlight said Skip.
        self.skip_pre_bind_plugins: set[str] = set()
        self.record_plugin_metrics = False
        # Pods (by key) that plugins ask the queue to activate after this cycle.
        self.pods_to_activate: dict[str, Any] = {}

    def write(self, key: str, value: Any) -> None:
        self._data[key] = value

    def read(self, key: str, kind: type[T]) -> T:
        """The value stored under key; KeyError if absent, TypeError if of another type."""
        value = self._data[key]
        if not isinstance(value, kind):
            raise TypeError(
                f"cycle state {key!r} holds {type(value).__name__}, not {kind.__name__}"
            )
        return value

    def get(self, key: str, kind: type[T]) -> T | None:
        value = self._data.get(key)
        return value if isinstance(value, kind) else None

    def delete(self, key: str) -> None:
        self._data.pop(key, None)

    def clone(self) -> CycleState:
        copy = CycleState()
        copy._data = {
            k: v.clone() if isinstance(v, Cloneable) else v for k, v in self._data.items()
        }
        copy.skip_filter_plugins = set(self.skip_filter_plugins)
        copy.skip_score_plugins = set(self.skip_score_plugins)
        copy.skip_pre_bind_plugins = set(self.skip_pre_bind_plugins)
        copy.record_plugin_metrics = self.record_plugin_metrics
        copy.pods_to_activate = self.pods_to_activate
        return copy
