"""Errors in API objects themselves (what the API server's validation would have refused)."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from typing import Any
from typing import TypeVar

_T = TypeVar("_T")

# What reading a malformed object can raise: a missing key, a value of the wrong type, a number
# that does not parse or overflows.
READ_ERRORS = (ValueError, TypeError, AttributeError, LookupError, ArithmeticError)


class InvalidObjectError(ValueError):
    """An object the scheduler cannot read; the message names the object and the field."""


def read_object(
    kind: str,
    raw: Mapping[str, Any],
    parse: Callable[[Mapping[str, Any]], _T],
    describe: Callable[[Mapping[str, Any]], str],
) -> _T:
    """`parse(raw)`; anything that goes wrong reading it becomes an InvalidObjectError that
    starts with the kind and `describe(raw)` (the object's name) and keeps the cause."""
    try:
        return parse(raw)
    except READ_ERRORS as exc:
        raise InvalidObjectError(f"{kind} {describe(raw)}: {exc}") from exc
