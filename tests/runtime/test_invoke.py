"""The plugin invoker: whatever a plugin does, the scheduler gets a value it can use."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from scheduler.framework import CycleState
from scheduler.framework import FilterBatch
from scheduler.framework import NodeTable
from scheduler.framework import Pod
from scheduler.framework import QueuedPodInfo
from scheduler.framework import Status
from scheduler.framework.events import QueueingHint
from scheduler.framework.status import Code
from scheduler.runtime import invoke
from scheduler.testing import build_table
from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.conftest import CapturedLogs


class Batch:
    """Batch forms returning whatever the test sets."""

    name = "Batch"

    def __init__(self, answer: Any) -> None:
        self.answer = answer

    def filter_nodes(self, state: CycleState, pod: Pod, table: NodeTable, rows: Any) -> Any:
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer

    def score_nodes(self, state: CycleState, pod: Pod, table: NodeTable, rows: Any) -> Any:
        return self.filter_nodes(state, pod, table, rows)


def _table() -> NodeTable:
    return build_table([make_node("a").obj(), make_node("b").obj()])


def _fault_of(call: Any) -> Status:
    with pytest.raises(invoke.PluginError) as raised:
        call()
    status = raised.value.status
    assert isinstance(status, invoke.PluginFault)
    assert status.code is Code.ERROR
    assert status.plugin == "Batch"
    return status


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        (RuntimeError("boom"), "RuntimeError: boom"),
        (None, "filter_nodes returned None, not a FilterBatch"),
        (FilterBatch.all_pass(1), "filter_nodes returned 1 codes for 2 nodes"),
    ],
    ids=["raises", "none", "short"],
)
def test_a_broken_batch_filter_is_an_error(answer: Any, words: str) -> None:
    table = _table()
    status = _fault_of(
        lambda: invoke.filter_batch(
            Batch(answer), CycleState(), make_pod("p").obj(), table, table.all_rows()
        )
    )
    assert status.message() == f'running "Batch" filter plugin: {words}'


@pytest.mark.parametrize(
    ("code", "words"),
    [
        (Code.ERROR, "the disk is gone"),
        (Code.SKIP, "the disk is gone"),
        (Code.WAIT, "the disk is gone"),
        (9, "filter_nodes returned 9, which is no status code"),
    ],
    ids=["error", "skip", "wait", "no-code"],
)
def test_a_batch_filter_failing_a_node_with_no_rejection_is_an_error(code: int, words: str) -> None:
    """Upstream turns every Filter status but Success and a rejection into an Error."""
    codes = np.array([int(Code.UNSCHEDULABLE), code, 0], dtype=np.int8)
    batch = FilterBatch(codes, (("the disk is gone",),))
    with pytest.raises(invoke.PluginError) as raised:
        invoke.rejection_codes("Batch", batch, codes != 0)
    status = raised.value.status
    assert (status.code, status.plugin) == (Code.ERROR, "Batch")
    assert status.message() == f'running "Batch" filter plugin: {words}'


@pytest.mark.parametrize(
    "code", [Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING]
)
def test_a_batch_filter_may_reject_with_any_rejecting_code(code: Code) -> None:
    codes = np.array([int(code), 0], dtype=np.int8)
    checked = invoke.rejection_codes("Batch", FilterBatch(codes, (("full",),)), codes != 0)
    assert checked.tolist() == [int(code)]


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        (np.array([1.0, math.nan]), "score_nodes returned the score nan"),
        (np.array([1, 2, 3]), "score_nodes returned int64 values of shape (3,) for 2 nodes"),
        (["high", "low"], "score_nodes returned <U4 values of shape (2,) for 2 nodes"),
    ],
    ids=["nan", "wrong-length", "strings"],
)
def test_a_broken_batch_score_is_an_error(answer: Any, words: str) -> None:
    table = _table()
    status = _fault_of(
        lambda: invoke.score_batch(
            Batch(answer), CycleState(), make_pod("p").obj(), table, table.all_rows()
        )
    )
    assert status.message() == f'running Score plugins: plugin "Batch" failed with: {words}'


def test_finite_float_batch_scores_are_made_integers() -> None:
    table = _table()
    scores = invoke.score_batch(
        Batch(np.array([10.0, 99.5])), CycleState(), make_pod("p").obj(), table, table.all_rows()
    )
    assert scores.dtype == np.int64
    assert scores.tolist() == [10, 99]


@pytest.mark.parametrize("bad", [150, -1])
def test_scores_outside_the_range_name_the_plugin(bad: int) -> None:
    with pytest.raises(invoke.PluginError) as raised:
        invoke.check_score_range("Spiky", np.array([50, bad], dtype=np.int64))
    assert raised.value.status.message() == (
        'applying score defaultWeights on Score plugins: plugin "Spiky" returns an invalid '
        f"score {bad}, it should in the range of [0, 100] after normalizing"
    )


class PerNodeScore:
    """A per-node Score plugin answering every node with the test's (score, status), or
    raising the test's exception."""

    name = "PerNode"

    def __init__(self, answer: tuple[int, Status] | Exception) -> None:
        self.answer = answer

    def score(self, state: CycleState, pod: Pod, node_info: Any) -> tuple[int, Status]:
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer

    def score_extensions(self) -> None:
        return None


@pytest.mark.parametrize(
    ("answer", "words"),
    [
        ((0, Status.from_error("disk is gone")), "disk is gone"),
        # Any code but Success fails Score, not only Error.
        ((0, Status.unschedulable("too busy")), "too busy"),
        (RuntimeError("boom"), "RuntimeError: boom"),
    ],
    ids=["error", "unschedulable", "raises"],
)
def test_a_per_node_score_failure_is_worded_as_upstream_words_it(
    answer: tuple[int, Status] | Exception, words: str
) -> None:
    table = _table()
    with pytest.raises(invoke.PluginError) as raised:
        invoke.score_rows(
            PerNodeScore(answer),
            CycleState(),
            make_pod("p").obj(),
            table.node_infos,
            table.all_rows(),
        )
    status = raised.value.status
    assert (status.code, status.plugin) == (Code.ERROR, "PerNode")
    assert status.message() == f'running Score plugins: plugin "PerNode" failed with: {words}'


def test_a_normalize_score_error_is_worded_as_upstream_words_it() -> None:
    status = invoke.error_status("NormalizeScore", "Spread", Status.from_error("no domains"))
    assert status.message() == (
        'running Normalize on Score plugins: plugin "Spread" failed with: no domains'
    )


class Answers:
    """Permit, PreFilter and PostFilter forms that all return whatever the test sets."""

    def __init__(self, answer: Any, name: str) -> None:
        self.answer = answer
        self.name = name

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> Any:
        return self.answer

    def pre_filter(self, state: CycleState, pod: Pod, table: NodeTable) -> Any:
        return self.answer

    def post_filter(self, state: CycleState, pod: Pod, statuses: Any) -> Any:
        return self.answer


@pytest.mark.parametrize(
    "answer",
    [(Status.wait(), math.nan), (Status.wait(), -1.0), (Status.wait(), "soon"), Status()],
    ids=["nan", "negative", "string", "no-pair"],
)
def test_a_permit_with_a_bad_timeout_is_an_error(answer: Any) -> None:
    status, timeout = invoke.permit(
        Answers(answer, "Permit"), CycleState(), make_pod("p").obj(), "a"
    )
    assert status.code is Code.ERROR
    assert status.message().startswith('running Permit plugin "Permit": returned ')
    assert timeout == 0.0


def _info(name: str, priority: int, timestamp: float) -> QueuedPodInfo:
    return QueuedPodInfo(make_pod(name).priority(priority).obj(), timestamp)


@pytest.mark.parametrize("answer", [RuntimeError("less broke"), "yes"], ids=["raises", "string"])
def test_a_broken_less_falls_back_to_priority_then_age(
    answer: Any, captured_logs: CapturedLogs
) -> None:
    def less(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        if isinstance(answer, Exception):
            raise answer
        return answer  # type: ignore[no-any-return]

    safe = invoke.guarded_less("Sorter", less)
    high, low = _info("high", 10, 5.0), _info("low", 0, 1.0)
    assert safe(high, low) is True
    assert safe(low, high) is False
    older, newer = _info("older", 0, 1.0), _info("newer", 0, 2.0)
    assert safe(older, newer) is True
    [first, *_] = captured_logs.records("error")
    assert (first["plugin"], first["extension_point"]) == ("Sorter", "QueueSort")


@pytest.mark.parametrize(
    "answer", [RuntimeError("hint broke"), 1, None], ids=["raises", "int", "none"]
)
def test_a_broken_hint_answers_queue(answer: Any) -> None:
    def hint(pod: Pod, old: Any, new: Any) -> QueueingHint:
        if isinstance(answer, Exception):
            raise answer
        return answer  # type: ignore[no-any-return]

    assert (
        invoke.guarded_hint("Hinter", hint)(make_pod("p").obj(), None, None) is QueueingHint.QUEUE
    )


def test_a_fault_is_logged_once_with_its_traceback(captured_logs: CapturedLogs) -> None:
    def explode(pod: Pod) -> Status:
        raise KeyError("missing")

    status = invoke.call_status("PreEnqueue", "Gate", explode, make_pod("p").obj())
    assert status.message() == "running PreEnqueue plugin \"Gate\": KeyError: 'missing'"
    [record] = captured_logs.records()
    assert record["msg"] == "Plugin failed"
    assert (record["plugin"], record["extension_point"]) == ("Gate", "PreEnqueue")
    assert record["err"] == status.message()
    assert "KeyError: 'missing'" in record["exception"]


def test_a_plugins_own_error_is_worded_as_upstream_words_it() -> None:
    status = invoke.error_status("Reserve", "Volumes", Status.from_error("disk is gone"))
    assert (status.message(), status.plugin) == (
        'running Reserve plugin "Volumes": disk is gone',
        "Volumes",
    )
    fault = invoke.fault("Reserve", "Volumes", "raised")
    assert invoke.error_status("Reserve", "Volumes", fault) is fault


def test_plugin_failure_names_the_plugin_of_a_rejection() -> None:
    rejected = invoke.plugin_failure("Reserve", "Quota", Status.unschedulable("over quota"))
    assert rejected == Status(Code.UNSCHEDULABLE, "over quota", plugin="Quota")
    pending = invoke.plugin_failure("PreBind", "Claims", Status.pending("allocating"))
    assert pending == Status(Code.PENDING, "allocating", plugin="Claims")


def test_plugin_failure_turns_anything_else_into_an_error_in_upstreams_words() -> None:
    error = invoke.plugin_failure("Bind", "Binder", Status.from_error("conflict"))
    assert error == Status(Code.ERROR, 'running Bind plugin "Binder": conflict', plugin="Binder")
    # A Wait where the point allows none fails the same way.
    wait = invoke.plugin_failure("Reserve", "Odd", Status.wait("later"))
    assert wait == Status(Code.ERROR, 'running Reserve plugin "Odd": later', plugin="Odd")
    filtered = invoke.plugin_failure("Filter", "Broken", Status.from_error("boom"))
    assert filtered.message() == 'running "Broken" filter plugin: boom'


def test_a_pre_or_post_filter_returning_no_pair_is_an_error_naming_the_pair() -> None:
    pod = make_pod("p").obj()
    plugin: Any = Answers("yes", "PrePost")
    result, status = invoke.pre_filter(plugin, CycleState(), pod, _table())
    assert result is None and status.code is Code.ERROR
    assert status.message() == (
        'running PreFilter plugin "PrePost": returned a str where a '
        "(PreFilterResult | None, Status) pair was expected"
    )
    post_result, status = invoke.post_filter(plugin, CycleState(), pod, None)
    assert post_result is None
    assert status.message() == (
        'running PostFilter plugin "PrePost": returned a str where a '
        "(PostFilterResult | None, Status) pair was expected"
    )


def test_a_pre_filter_pair_is_passed_through() -> None:
    plugin: Any = Answers((None, Status.unschedulable("no")), "PrePost")
    result, status = invoke.pre_filter(plugin, CycleState(), make_pod("p").obj(), _table())
    assert result is None and status == Status.unschedulable("no")


class Details:
    name = "Details"

    def __init__(self, answer: Any) -> None:
        self.answer = answer

    def filter_details(self) -> Any:
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


@pytest.mark.parametrize(
    ("answer", "lines"),
    [
        (["one", "two"], ("one", "two")),
        (("one",), ("one",)),
        ("a string, not lines", ()),
        (None, ()),
        (RuntimeError("boom"), ()),
    ],
)
def test_explains_details_are_lines_or_nothing(
    answer: Any, lines: tuple[str, ...], captured_logs: CapturedLogs
) -> None:
    plugin = Details(answer)
    assert invoke.call_for_lines("FilterDetails", plugin.name, plugin.filter_details) == lines
    faults = [r for r in captured_logs.records("error") if r.get("plugin") == "Details"]
    assert bool(faults) == (lines == ())


class AwaitedAnswers:
    """An awaiting PostFilter that raises `raises`, else returns `answer`."""

    name = "Awaited"

    def __init__(self, answer: Any, raises: Exception | None = None) -> None:
        self.answer = answer
        self.raises = raises

    async def post_filter_awaiting(self, state: CycleState, pod: Pod, statuses: Any) -> Any:
        if self.raises is not None:
            raise self.raises
        return self.answer


async def test_an_awaiting_post_filter_is_held_to_the_same_pair() -> None:
    pod = make_pod("p").obj()
    kept: Any = AwaitedAnswers((None, Status.unschedulable("no")))
    assert await invoke.post_filter_awaiting(kept, CycleState(), pod, None) == (
        None,
        Status.unschedulable("no"),
    )
    wrong: Any = AwaitedAnswers(Status())
    result, status = await invoke.post_filter_awaiting(wrong, CycleState(), pod, None)
    assert result is None
    assert status.message() == (
        'running PostFilter plugin "Awaited": returned a Status where a '
        "(PostFilterResult | None, Status) pair was expected"
    )
    raising: Any = AwaitedAnswers(None, raises=RuntimeError("boom"))
    result, status = await invoke.post_filter_awaiting(raising, CycleState(), pod, None)
    assert result is None and status.code is Code.ERROR
    assert status.message().startswith('running PostFilter plugin "Awaited": ')
    assert "boom" in status.message()
