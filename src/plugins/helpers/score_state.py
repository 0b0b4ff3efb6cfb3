"""The PreScore state a vectorized Score method cannot do without.

`score_nodes` returns scores, not a Status, so a missing state is raised; the framework turns
what it raises into the plugin's Error (naming plugin and extension point), as it does for a
per-node Score that returns `Status.missing_state`.
"""

from __future__ import annotations

from typing import TypeVar

from scheduler.framework import CycleState

T = TypeVar("T")


def pre_score_state(state: CycleState, key: str, kind: type[T]) -> T:
    """The `kind` object PreScore wrote under `key`; LookupError when PreScore did not run."""
    found = state.get(key, kind)
    if found is None:
        raise LookupError(f"{key} missing: PreScore did not run")
    return found
