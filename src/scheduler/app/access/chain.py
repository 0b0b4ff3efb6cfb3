"""Asking a chain of authenticators or authorizers in turn, as kube-apiserver's unions do.

The first member that decides answers for the chain. A member that fails does not stop the
later ones, but its failure is not forgotten: when no member decides, the failures are raised
together, so that a broken credential or a review that got no answer is never read as "no
opinion".
"""

from __future__ import annotations

from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic
from typing import TypeVar

Member = TypeVar("Member")
Answer = TypeVar("Answer")


@dataclass(frozen=True, slots=True)
class Outcome(Generic[Answer]):
    """The deciding answer, None if no member decided; and the answers of those that did not."""

    decided: Answer | None
    undecided: tuple[Answer, ...]


async def ask_in_turn(
    chain: Sequence[Member],
    ask: Callable[[Member], Awaitable[Answer]],
    *,
    decides: Callable[[Answer], bool],
    failure: type[Exception],
) -> Outcome[Answer]:
    """Ask each member until one's answer `decides`. A member raising `failure` is passed
    over; if none decides and any failed, `failure` is raised with their messages joined."""
    failures: list[str] = []
    undecided: list[Answer] = []
    for member in chain:
        try:
            answer = await ask(member)
        except failure as error:
            failures.append(str(error))
            continue
        if decides(answer):
            return Outcome(answer, tuple(undecided))
        undecided.append(answer)
    if failures:
        raise failure("; ".join(failures))
    return Outcome(None, tuple(undecided))
