"""A chain answers with its first deciding member; failures count only when none decides."""

from __future__ import annotations

import pytest

from scheduler.app.access.chain import ask_in_turn


class RefusedError(Exception):
    pass


async def answer(member: str) -> str:
    if member.startswith("fail"):
        raise RefusedError(f"{member} failed")
    return member


def decides(value: str) -> bool:
    return value.startswith("yes")


async def test_the_first_deciding_member_answers_and_later_ones_are_not_asked() -> None:
    asked: list[str] = []

    async def ask(member: str) -> str:
        asked.append(member)
        return await answer(member)

    chain = ["maybe-1", "fail-a", "yes-1", "yes-2"]
    outcome = await ask_in_turn(chain, ask, decides=decides, failure=RefusedError)
    assert outcome.decided == "yes-1"
    assert outcome.undecided == ("maybe-1",)
    assert asked == ["maybe-1", "fail-a", "yes-1"]


async def test_without_a_decision_the_undecided_answers_are_returned() -> None:
    chain = ["maybe-1", "maybe-2"]
    outcome = await ask_in_turn(chain, answer, decides=decides, failure=RefusedError)
    assert outcome.decided is None
    assert outcome.undecided == ("maybe-1", "maybe-2")


async def test_without_a_decision_every_failure_is_raised_together() -> None:
    chain = ["fail-a", "maybe-1", "fail-b"]
    with pytest.raises(RefusedError) as raised:
        await ask_in_turn(chain, answer, decides=decides, failure=RefusedError)
    assert str(raised.value) == "fail-a failed; fail-b failed"


async def test_other_errors_are_not_passed_over() -> None:
    async def broken(member: str) -> str:
        raise KeyError(member)

    with pytest.raises(KeyError):
        await ask_in_turn(["a"], broken, decides=decides, failure=RefusedError)
