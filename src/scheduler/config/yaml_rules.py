"""YAML read as kube-scheduler reads it: by sigs.k8s.io/yaml, which parses with go-yaml v2 and
converts the result to JSON, rather than by PyYAML's YAML 1.1 rules.

A plain (unquoted) scalar is, as go-yaml v2's resolve.go decides:

- a boolean when it is y, Y, yes, Yes, YES, true, True, TRUE, on, On or ON, or n, N, no, No,
  NO, false, False, FALSE, off, Off or OFF;
- null when it is empty, ~, null, Null or NULL;
- an integer when Go's strconv.ParseInt reads it in base 0 once underscores are removed (so
  0x1f, 0o17, 0b101, and 017 as octal), within int64, or uint64 without a sign;
- a float when it matches `[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?` (so 1e2 is
  one) and is finite, or is one of .inf, -.inf, .nan and their capitalised spellings;
- a string otherwise: 1:30 is not a base-60 number, 2024-01-01 is not a date, = is text.

The JSON that sigs.k8s.io/yaml then produces gives two more rules: a whole float is written
as an integer (50.0 and 1e2 fill integer fields), and every mapping key is a string (a key
`1` is "1", a key `yes` is "true"). JSON files are read as JSON and keep their own rules.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal
from typing import Any

import yaml
from yaml.constructor import ConstructorError
from yaml.constructor import SafeConstructor
from yaml.resolver import Resolver

_PREFIX = "tag:yaml.org,2002:"
STR_TAG = _PREFIX + "str"
INT_TAG = _PREFIX + "int"
FLOAT_TAG = _PREFIX + "float"
BOOL_TAG = _PREFIX + "bool"
NULL_TAG = _PREFIX + "null"
MERGE_TAG = _PREFIX + "merge"

_KNOWN: dict[str, tuple[str, Any]] = {
    **dict.fromkeys(("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE"), (BOOL_TAG, True)),
    **dict.fromkeys(("on", "On", "ON"), (BOOL_TAG, True)),
    **dict.fromkeys(("n", "N", "no", "No", "NO", "false", "False", "FALSE"), (BOOL_TAG, False)),
    **dict.fromkeys(("off", "Off", "OFF"), (BOOL_TAG, False)),
    **dict.fromkeys(("", "~", "null", "Null", "NULL"), (NULL_TAG, None)),
    **dict.fromkeys((".nan", ".NaN", ".NAN"), (FLOAT_TAG, math.nan)),
    **dict.fromkeys((".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"), (FLOAT_TAG, math.inf)),
    **dict.fromkeys(("-.inf", "-.Inf", "-.INF"), (FLOAT_TAG, -math.inf)),
}
# go-yaml tries numbers only for scalars starting with one of these.
_NUMBER_STARTS = frozenset("+-.0123456789")
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?")
_BASE_PREFIXES = {"b": 2, "o": 8, "x": 16}
_DIGITS = {2: re.compile("[01]+"), 8: re.compile("[0-7]*"), 16: re.compile("[0-9a-fA-F]+")}
_DECIMAL = re.compile("[1-9][0-9]{0,19}")  # more digits than uint64's 20 cannot fit
INT64_MIN, INT64_MAX, UINT64_MAX = -(2**63), 2**63 - 1, 2**64 - 1


def plain_scalar(text: str) -> tuple[str, Any]:
    """The tag and value go-yaml v2 gives a plain scalar."""
    if text == "<<":
        # go-yaml's decoder, not its resolver, treats a plain << as a merge key; PyYAML needs
        # the tag.
        return MERGE_TAG, text
    known = _KNOWN.get(text)
    if known is not None:
        return known
    if text[:1] in _NUMBER_STARTS:
        # go-yaml drops underscores before reading a number, except after a leading dot.
        plain = text if text.startswith(".") else text.replace("_", "")
        integer = _go_int(plain)
        if integer is not None:
            return INT_TAG, integer
        if _FLOAT.fullmatch(plain):
            number = float(plain)
            if math.isfinite(number):  # Go refuses an overflowing float, leaving a string
                return FLOAT_TAG, number
    return STR_TAG, text


def _go_int(text: str) -> int | None:
    """strconv.ParseInt(text, 0, 64), else ParseUint(text, 0, 64); None if neither reads it."""
    sign = text[:1] if text[:1] in ("+", "-") else ""
    body = text[len(sign) :]
    if len(body) >= 3 and body[0] == "0" and body[1].lower() in _BASE_PREFIXES:
        base, digits = _BASE_PREFIXES[body[1].lower()], body[2:]
    elif body.startswith("0"):
        base, digits = 8, body[1:]
    elif _DECIMAL.fullmatch(body):
        base, digits = 10, body
    else:
        return None
    if base != 10 and not _DIGITS[base].fullmatch(digits):
        return None
    value = int(digits, base) if digits else 0
    if sign == "-":
        value = -value
    # ParseUint, the fallback for values past int64, takes no sign at all.
    upper = INT64_MAX if sign else UINT64_MAX
    return value if INT64_MIN <= value <= upper else None


def json_number(value: float) -> float | int:
    """`value` as it comes out of sigs.k8s.io/yaml's JSON: a whole float is an integer there
    (Go writes 50.0 as 50), so it fills integer fields. Past 64 bits no integer field holds it
    and go-yaml reads it back as a float, so it stays one."""
    if not value.is_integer():
        return value
    # The shortest digits that read back as `value`, which is what Go writes (1.2e18 is
    # 1200000000000000000, not the digits of the nearest binary value).
    number = int(Decimal(repr(value)))
    return number if INT64_MIN <= number <= UINT64_MAX else value


def json_key(key: Any) -> str | None:
    """A mapping key as the string sigs.k8s.io/yaml makes of it in JSON; None for a key that
    has no string form there (null)."""
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, int):
        return str(key)
    if isinstance(key, float):
        # Go writes strconv.FormatFloat(key, 'g', -1, 32); Python's shortest form is the same
        # for the short fractions keys are written with (1.5).
        if math.isnan(key):
            return ".nan"
        if math.isinf(key):
            return ".inf" if key > 0 else "-.inf"
        return repr(key)
    return None


class GoResolver(Resolver):
    """Plain scalars tagged as go-yaml v2 tags them. Used for reading, and for writing too, so
    that a string upstream would read as something else (`y`, `1e2`) is quoted."""

    def resolve(self, kind: type[yaml.Node], value: Any, implicit: tuple[bool, bool]) -> str:
        if kind is yaml.ScalarNode and implicit[0]:
            return plain_scalar(value)[0]
        tag: str = super().resolve(kind, value, implicit)  # type: ignore[no-untyped-call]
        return tag


class GoConstructor(SafeConstructor):
    """Values of those tags as sigs.k8s.io/yaml's JSON holds them."""


def _construct_scalar(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> Any:
    tag, value = plain_scalar(node.value)
    if tag == node.tag:
        return json_number(value) if tag == FLOAT_TAG else value
    if node.tag == FLOAT_TAG and tag == INT_TAG:  # `!!float 1`
        return json_number(float(value))
    problem = f"cannot decode {_short(tag)} `{node.value}` as a {_short(node.tag)}"
    raise ConstructorError(None, None, problem, node.start_mark)


def _short(tag: str) -> str:
    return tag.replace(_PREFIX, "!!")


def _construct_text(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> str:
    # go-yaml gives a value tagged as a timestamp as its text, and a << that is not a key
    # (where it merges) is the string "<<".
    return str(node.value)


for _tag in (INT_TAG, FLOAT_TAG, BOOL_TAG, NULL_TAG):
    GoConstructor.add_constructor(_tag, _construct_scalar)
for _tag in (_PREFIX + "timestamp", MERGE_TAG):
    GoConstructor.add_constructor(_tag, _construct_text)


class GoSafeDumper(GoResolver, yaml.SafeDumper):
    """Quotes every string that upstream's YAML reader (`y`, `1e2`) or a YAML 1.1 reader
    (`1:30`, `2024-01-01`) would take for something else, as upstream's writer does."""

    def resolve(self, kind: type[yaml.Node], value: Any, implicit: tuple[bool, bool]) -> str:
        tag = super().resolve(kind, value, implicit)
        if tag == STR_TAG:
            tag = Resolver.resolve(self, kind, value, implicit)  # type: ignore[no-untyped-call]
        return tag
