"""FilterBatch: the batch Filter form's answer, row by row."""

from __future__ import annotations

import numpy as np

from scheduler.framework import FilterBatch
from scheduler.framework import Status
from scheduler.framework.status import Code


def test_all_pass_rejects_no_row() -> None:
    batch = FilterBatch.all_pass(3)
    assert batch.passed.tolist() == [True, True, True]


def test_reject_where_fails_the_marked_rows_with_one_status() -> None:
    batch = FilterBatch.reject_where(np.array([False, True, True]), Code.UNSCHEDULABLE, "taken")
    assert batch.codes.tolist() == [0, int(Code.UNSCHEDULABLE), int(Code.UNSCHEDULABLE)]
    assert batch.reasons_at(1) == batch.reasons_at(2) == ("taken",)


def test_a_uniform_success_passes_every_row() -> None:
    assert FilterBatch.uniform(Status(), 2).passed.tolist() == [True, True]


def test_a_uniform_rejection_fails_every_row_alike() -> None:
    batch = FilterBatch.uniform(Status.unresolvable("pod asks for a missing class"), 2)
    assert batch.codes.tolist() == [int(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)] * 2
    assert batch.reasons_at(0) == ("pod asks for a missing class",)


def test_an_error_keeps_its_text_as_the_reason() -> None:
    batch = FilterBatch.uniform(Status.from_error(RuntimeError("lost the cache")), 1)
    assert batch.reasons_at(0) == ("lost the cache",)


def test_from_statuses_keeps_each_rows_code_and_reasons_once() -> None:
    statuses = [
        Status(),
        Status.unschedulable("too small"),
        Status.unresolvable("wrong zone", "no label"),
        Status.unschedulable("too small"),
    ]
    batch = FilterBatch.from_statuses(statuses)
    assert batch.passed.tolist() == [True, False, False, False]
    assert [Code(int(c)) for c in batch.codes] == [s.code for s in statuses]
    assert [batch.reasons_at(i) for i in (1, 2, 3)] == [
        ("too small",),
        ("wrong zone", "no label"),
        ("too small",),
    ]
    assert len(batch.reasons) == 2
