"""Preemption's texts: the FitError over the dry run and errors of several nodes."""

from __future__ import annotations

from plugins.helpers.preemption.messages import aggregate
from plugins.helpers.preemption.messages import no_candidates_message
from scheduler.framework import Status


def test_one_error_is_its_own_text() -> None:
    assert aggregate(["node n1: boom"]) == "node n1: boom"


def test_the_same_error_from_several_nodes_is_said_once_without_brackets() -> None:
    assert aggregate(["boom", "boom"]) == "boom"


def test_distinct_errors_are_listed_once_each_in_order_in_brackets() -> None:
    assert aggregate(["b", "a", "b", "c"]) == "[b, a, c]"


def test_nodes_that_gave_no_reason_leave_the_text_at_the_colon() -> None:
    statuses = {"n1": Status.unschedulable(), "n2": Status.unschedulable()}
    assert no_candidates_message(2, statuses) == "0/2 nodes are available:"


def test_nodes_the_dry_run_did_not_try_count_as_not_helpful() -> None:
    statuses = {"n1": Status.unschedulable("Insufficient cpu")}
    assert no_candidates_message(3, statuses) == (
        "0/3 nodes are available: 1 Insufficient cpu, 2 Preemption is not helpful for scheduling."
    )
