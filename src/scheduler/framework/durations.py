"""Go-style durations ("15s", "1m30s", "250ms") as they appear in KubeSchedulerConfiguration.

The configuration keeps durations as float seconds; files carry them as strings, so parsing
accepts only strings (as upstream's decoder does) and dumping writes what Go's
`time.Duration.String()` would print, so a written config reads back to the same value.
"""

from __future__ import annotations

import json
import re
from fractions import Fraction
from typing import Annotated
from typing import Any

from pydantic import BeforeValidator
from pydantic import PlainSerializer

_NANOS_PER_UNIT: dict[str, int] = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,  # micro sign
    "μs": 1_000,  # Greek mu
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60 * 1_000_000_000,
    "h": 3600 * 1_000_000_000,
}
_NUMBER = re.compile(r"\d+(?:\.\d*)?|\.\d+")
# Go reads a unit as everything up to the next digit or dot.
_UNIT = re.compile(r"[^0-9.]*")
_NANOS_PER_SECOND = 1_000_000_000
_MAX_NANOS = 2**63 - 1


def _quoted(text: str) -> str:
    """As Go's strconv.Quote writes it (printable characters kept as they are)."""
    return json.dumps(text, ensure_ascii=False)


def parse_duration(text: str) -> float:
    """Seconds in a Go duration string; raises ValueError with Go's own message (`time:
    invalid duration "x"`, `time: unknown unit ...`, `time: missing unit ...`) on anything
    Go's time.ParseDuration rejects."""
    invalid = ValueError(f"time: invalid duration {_quoted(text)}")
    body = text
    sign = 1
    if body[:1] in ("+", "-"):
        sign = -1 if body[0] == "-" else 1
        body = body[1:]
    if body == "0":
        return 0.0
    if not body:
        raise invalid
    nanos = Fraction(0)
    position = 0
    while position < len(body):
        number = _NUMBER.match(body, position)
        if number is None:
            raise invalid
        unit = _UNIT.match(body, number.end())
        assert unit is not None  # matches the empty string at worst
        if not unit.group():
            raise ValueError(f"time: missing unit in duration {_quoted(text)}")
        if unit.group() not in _NANOS_PER_UNIT:
            raise ValueError(
                f"time: unknown unit {_quoted(unit.group())} in duration {_quoted(text)}"
            )
        nanos += Fraction(number.group()) * _NANOS_PER_UNIT[unit.group()]
        if nanos > _MAX_NANOS:
            # Go keeps durations in an int64 of nanoseconds (about 292 years).
            raise invalid
        position = unit.end()
    return float(sign * nanos / _NANOS_PER_SECOND)


def _decimal(value: int, unit: int) -> str:
    """`value / unit` written with only the fraction digits that are needed."""
    whole, rest = divmod(value, unit)
    if rest == 0:
        return str(whole)
    digits = len(str(unit)) - 1
    fraction = str(rest).rjust(digits, "0").rstrip("0")
    return f"{whole}.{fraction}"


def format_duration(seconds: float) -> str:
    """The Go `time.Duration.String()` text for `seconds`, e.g. 90.0 -> "1m30s"."""
    nanos = round(seconds * _NANOS_PER_SECOND)
    if nanos == 0:
        return "0s"
    sign = "-" if nanos < 0 else ""
    nanos = abs(nanos)
    if nanos < _NANOS_PER_SECOND:
        # Below one second Go picks the largest unit that keeps the integer part non-zero.
        if nanos < 1_000:
            return f"{sign}{nanos}ns"
        if nanos < 1_000_000:
            return f"{sign}{_decimal(nanos, 1_000)}µs"
        return f"{sign}{_decimal(nanos, 1_000_000)}ms"
    hours, rest = divmod(nanos, _NANOS_PER_UNIT["h"])
    minutes, rest = divmod(rest, _NANOS_PER_UNIT["m"])
    text = f"{_decimal(rest, _NANOS_PER_SECOND)}s"
    if hours:
        text = f"{hours}h{minutes}m{text}"
    elif minutes:
        text = f"{minutes}m{text}"
    return sign + text


def _validate(value: Any) -> Any:
    if isinstance(value, str):
        return parse_duration(value)
    raise ValueError('must be a duration string such as "15s" or "1m30s"')


# A duration field: float seconds in Python, a Go duration string in files.
Duration = Annotated[
    float,
    BeforeValidator(_validate),
    PlainSerializer(format_duration, return_type=str, when_used="json"),
]
