"""CycleState: one attempt's scratch space, and what a clone shares and what it copies."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field

import pytest

from scheduler.framework import CycleState


@dataclass
class _Counts:
    seen: list[str] = field(default_factory=list)

    def clone(self) -> _Counts:
        return _Counts(list(self.seen))


@dataclass
class _Shared:
    seen: list[str] = field(default_factory=list)


def test_read_returns_what_was_written() -> None:
    state = CycleState()
    state.write("k", _Counts(["a"]))
    assert state.read("k", _Counts).seen == ["a"]


def test_read_names_the_key_and_both_types_on_a_mismatch() -> None:
    state = CycleState()
    state.write("k", _Shared())
    with pytest.raises(TypeError, match="cycle state 'k' holds _Shared, not _Counts"):
        state.read("k", _Counts)


def test_read_of_a_missing_key_raises_key_error() -> None:
    with pytest.raises(KeyError):
        CycleState().read("absent", _Counts)


def test_get_answers_none_for_a_missing_key_or_another_type() -> None:
    state = CycleState()
    state.write("k", _Shared())
    assert state.get("absent", _Shared) is None
    assert state.get("k", _Counts) is None
    assert isinstance(state.get("k", _Shared), _Shared)


def test_delete_forgets_a_key_and_ignores_one_never_written() -> None:
    state = CycleState()
    state.write("k", _Shared())
    state.delete("k")
    state.delete("never")
    assert state.get("k", _Shared) is None


def test_a_clone_copies_cloneable_values_and_shares_the_rest() -> None:
    state = CycleState()
    state.write("copied", _Counts(["a"]))
    state.write("shared", _Shared(["a"]))
    copy = state.clone()
    copy.read("copied", _Counts).seen.append("b")
    copy.read("shared", _Shared).seen.append("b")
    assert state.read("copied", _Counts).seen == ["a"]
    assert state.read("shared", _Shared).seen == ["a", "b"]


def test_a_clone_has_its_own_skip_sets_but_the_same_pods_to_activate() -> None:
    state = CycleState()
    state.skip_filter_plugins.add("A")
    state.skip_score_plugins.add("B")
    state.record_plugin_metrics = True
    copy = state.clone()
    copy.skip_filter_plugins.add("C")
    copy.skip_score_plugins.add("D")
    copy.pods_to_activate["ns/p"] = object()
    assert state.skip_filter_plugins == {"A"} and state.skip_score_plugins == {"B"}
    assert copy.skip_filter_plugins == {"A", "C"} and copy.record_plugin_metrics
    # Activations asked for in a dry run (preemption) still reach the queue after the cycle.
    assert "ns/p" in state.pods_to_activate
