"""Status and Code: the values every plugin returns, as the framework promises them."""

from __future__ import annotations

import pytest

from scheduler.framework import Status
from scheduler.framework.status import SKIP
from scheduler.framework.status import Code


def test_codes_keep_upstreams_numbers_and_spelling() -> None:
    assert [(int(c), c.label) for c in Code] == [
        (0, "Success"),
        (1, "Error"),
        (2, "Unschedulable"),
        (3, "UnschedulableAndUnresolvable"),
        (4, "Wait"),
        (5, "Skip"),
        (6, "Pending"),
    ]


def test_a_bare_status_is_success() -> None:
    status = Status()
    assert status.is_success and not status.is_rejected
    assert status.message() == ""


@pytest.mark.parametrize(
    ("status", "rejected"),
    [
        (Status.unschedulable("no"), True),
        (Status.unresolvable("never"), True),
        (Status.pending("waiting for a claim"), True),
        (Status.from_error("boom"), False),
        (Status.wait(), False),
        (Status.skip(), False),
        (Status(), False),
    ],
)
def test_only_unschedulable_unresolvable_and_pending_reject(status: Status, rejected: bool) -> None:
    assert status.is_rejected is rejected


def test_constructors_set_their_code() -> None:
    assert Status.unschedulable("a").code is Code.UNSCHEDULABLE
    assert Status.unresolvable("a").code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert Status.wait().is_wait
    assert Status.pending().code is Code.PENDING
    assert Status.skip() is SKIP and SKIP.is_skip


def test_message_joins_reasons_after_the_error() -> None:
    status = Status(Code.ERROR, "first", "second", error=ValueError("cause"))
    assert status.message() == "cause, first, second"
    assert Status.from_error(RuntimeError("lost")).message() == "lost"
    assert Status.from_error("plain text").message() == "plain text"
    assert Status.from_error(RuntimeError("lost")).error is not None


def test_missing_state_uses_upstreams_words() -> None:
    assert Status.missing_state("PreFilterX").message() == (
        'error reading "PreFilterX" from cycleState: not found'
    )
    assert Status.missing_state("k", lead="reading").message() == (
        'reading "k" from cycleState: not found'
    )
    assert Status.missing_state("k").code is Code.ERROR


def test_with_plugin_returns_a_copy_unless_it_already_names_the_plugin() -> None:
    original = Status.unschedulable("full")
    named = original.with_plugin("Fit")
    assert (named.plugin, original.plugin) == ("Fit", "")
    assert named.reasons == ("full",) and named.code is Code.UNSCHEDULABLE
    assert named.with_plugin("Fit") is named


def test_a_status_cannot_be_changed() -> None:
    status = Status.unschedulable("x")
    with pytest.raises(AttributeError, match="Status is immutable"):
        status.code = Code.SUCCESS


def test_equal_statuses_have_the_same_code_message_and_plugin() -> None:
    assert Status.unschedulable("a", "b") == Status(Code.UNSCHEDULABLE, "a, b")
    assert Status.unschedulable("a") != Status.unresolvable("a")
    assert Status.unschedulable("a") != Status.unschedulable("a").with_plugin("P")
    assert len({Status.unschedulable("a"), Status.unschedulable("a")}) == 1


def test_repr_shows_code_plugin_and_message() -> None:
    assert repr(Status.unschedulable("full").with_plugin("Fit")) == (
        "Status(Unschedulable plugin=Fit: 'full')"
    )
    assert repr(Status()) == "Status(Success: '')"
