"""FailedScheduling texts built from a cycle's rejections, in upstream's exact format."""

from __future__ import annotations

import numpy as np
import pytest

from scheduler.framework.diagnosis import Diagnosis
from scheduler.framework.diagnosis import single_node_fit_error
from scheduler.framework.status import Code
from scheduler.framework.status import Status
from scheduler.testing import build_table
from scheduler.testing import make_node


def _table(count: int) -> Diagnosis:
    return Diagnosis(build_table([make_node(f"n{i}").obj() for i in range(count)]))


def test_histogram_counts_each_reason_and_sorts_as_strings() -> None:
    diagnosis = _table(12)
    taint = ("node(s) had untolerated taint {dedicated: gpu}",)
    diagnosis.reject_rows(
        np.array([0], dtype=np.int64),
        np.array([3], dtype=np.int8),
        "TaintToleration",
        [taint],
        None,
    )
    rows = np.arange(1, 12, dtype=np.int64)
    diagnosis.reject_rows(
        rows, np.full(11, 2, dtype=np.int8), "NodeResourcesFit", [("Insufficient cpu",)], None
    )
    # "11 ..." sorts before "1 node(s)..." only if compared as strings: upstream does exactly that.
    assert diagnosis.fit_error_message() == (
        "0/12 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, "
        "11 Insufficient cpu."
    )
    assert diagnosis.unschedulable_plugins == {"TaintToleration", "NodeResourcesFit"}


def test_a_node_with_several_reasons_counts_once_per_reason() -> None:
    diagnosis = _table(3)
    reasons = [("Insufficient cpu", "Insufficient memory"), ("Insufficient cpu",)]
    diagnosis.reject_rows(
        np.array([0, 1, 2], dtype=np.int64),
        np.full(3, 2, dtype=np.int8),
        "NodeResourcesFit",
        reasons,
        np.array([0, 1, 1], dtype=np.int32),
    )
    assert diagnosis.fit_error_message() == (
        "0/3 nodes are available: 1 Insufficient memory, 3 Insufficient cpu."
    )


def test_prefilter_rejection_replaces_the_histogram() -> None:
    diagnosis = _table(4)
    status = Status.unresolvable("waiting for scheduling gates: [a]").with_plugin("SchedulingGates")
    diagnosis.pre_filter_message = status.message()
    diagnosis.mark_absent(np.empty(0, dtype=np.int64), status)
    assert diagnosis.fit_error_message() == (
        "0/4 nodes are available: waiting for scheduling gates: [a]."
    )
    assert diagnosis.status_of("n2").code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE


def test_a_node_without_a_rejection_reads_as_upstreams_absent_status() -> None:
    # Upstream's NodeToStatus holds only rejected nodes; any other (one that passed the
    # Filters and an extender dropped unnamed, one never evaluated, one not in the snapshot)
    # gets the absent status: UnschedulableAndUnresolvable without a reason by default.
    diagnosis = _table(3)
    diagnosis.reject_row(0, Status(Code.UNSCHEDULABLE, "Insufficient cpu", plugin="Fit"))
    assert diagnosis.status_of("n0").code is Code.UNSCHEDULABLE
    for name in ("n1", "missing"):
        status = diagnosis.status_of(name)
        assert status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
        assert status.all_reasons() == ()
    # After a PreFilter result, the absent status is the one its left-out nodes have.
    absent = Status.unresolvable("node(s) didn't satisfy plugin(s) [NodeAffinity]")
    diagnosis.mark_absent(np.array([0, 1], dtype=np.int64), absent)
    assert diagnosis.status_of("n1") is absent and diagnosis.status_of("n2") is absent
    assert diagnosis.status_of("n0").code is Code.UNSCHEDULABLE


def test_nodes_outside_a_prefilter_result_count_as_absent() -> None:
    diagnosis = _table(5)
    absent = Status.unresolvable("node(s) didn't satisfy plugin(s) [NodeAffinity]")
    diagnosis.mark_absent(np.array([1, 3], dtype=np.int64), absent)
    diagnosis.reject_rows(
        np.array([1, 3], dtype=np.int64),
        np.full(2, 2, dtype=np.int8),
        "NodePorts",
        [("node(s) didn't have free ports for the requested pod ports",)],
        None,
    )
    assert diagnosis.fit_error_message() == (
        "0/5 nodes are available: 2 node(s) didn't have free ports for the requested pod ports, "
        "3 node(s) didn't satisfy plugin(s) [NodeAffinity]."
    )
    assert diagnosis.nodes_with_code(int(Code.UNSCHEDULABLE)) == ["n1", "n3"]
    assert sorted(diagnosis.nodes_with_code(int(Code.UNSCHEDULABLE_AND_UNRESOLVABLE))) == [
        "n0",
        "n2",
        "n4",
    ]


def test_post_filter_message_is_appended_without_a_period() -> None:
    diagnosis = _table(2)
    diagnosis.reject_rows(
        np.array([0, 1], dtype=np.int64),
        np.full(2, 2, dtype=np.int8),
        "NodeResourcesFit",
        [("Insufficient cpu",)],
        None,
    )
    diagnosis.post_filter_message = (
        "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."
    )
    assert diagnosis.fit_error_message() == (
        "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: "
        "2 No preemption victims found for incoming pod."
    )


@pytest.mark.parametrize(
    ("status", "expected"),
    [
        (
            Status(Code.UNSCHEDULABLE, "rejected due to timeout after waiting 10s at plugin P"),
            "0/1 nodes are available: 1 rejected due to timeout after waiting 10s at plugin P.",
        ),
        (Status(Code.UNSCHEDULABLE, "b", "a"), "0/1 nodes are available: 1 a, 1 b."),
        (Status(Code.UNSCHEDULABLE, "a", "a"), "0/1 nodes are available: 2 a."),
        # Upstream counts only reasons: a bare rejection ends the text at the colon.
        (Status(Code.UNSCHEDULABLE), "0/1 nodes are available:"),
        (Status.from_error(RuntimeError("boom")), "0/1 nodes are available: 1 boom."),
    ],
    ids=["permit-timeout", "two-reasons", "repeated-reason", "no-reason", "error"],
)
def test_single_node_rejections(status: Status, expected: str) -> None:
    assert single_node_fit_error(status) == expected


def test_rejections_without_a_reason_count_for_nothing_in_the_text() -> None:
    diagnosis = _table(3)
    diagnosis.reject_row(0, Status(Code.UNSCHEDULABLE, plugin="Quiet"))
    diagnosis.reject_row(1, Status(Code.UNSCHEDULABLE, plugin="Quiet"))
    assert diagnosis.fit_error_message() == "0/3 nodes are available:"
    diagnosis.reject_row(2, Status(Code.UNSCHEDULABLE, "Insufficient cpu", plugin="Fit"))
    assert diagnosis.fit_error_message() == "0/3 nodes are available: 1 Insufficient cpu."
    assert diagnosis.unschedulable_plugins == {"Quiet", "Fit"}


def test_a_status_naming_no_plugin_adds_no_rejector() -> None:
    diagnosis = _table(2)
    outside = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) didn't satisfy plugin(s) [X]")
    diagnosis.mark_absent(np.array([0], dtype=np.int64), outside)
    assert diagnosis.unschedulable_plugins == set()
