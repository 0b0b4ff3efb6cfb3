"""Field selectors (`spec.nodeName=`, `status.phase!=Failed,spec.schedulerName=x`).

The API server accepts only a few fields per resource; the simulator accepts any dotted path,
which is a superset. An absent field reads as "" (as `spec.nodeName` of a pending pod does), a
boolean as "true"/"false". Terms are ANDed. A backslash escapes `,`, `=`, `!` or `\\` in values.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from scheduler.framework.errors import APIError

_TERM = re.compile(r"^\s*([A-Za-z0-9_.\-]+)\s*(!=|==|=)(.*)$", re.DOTALL)


@dataclass(frozen=True, slots=True)
class FieldRequirement:
    path: tuple[str, ...]
    value: str
    equal: bool

    def matches(self, obj: Mapping[str, Any]) -> bool:
        return (field_value(obj, self.path) == self.value) == self.equal


@dataclass(frozen=True, slots=True)
class FieldSelector:
    requirements: tuple[FieldRequirement, ...]

    def matches(self, obj: Mapping[str, Any]) -> bool:
        return all(r.matches(obj) for r in self.requirements)

    @property
    def empty(self) -> bool:
        return not self.requirements


def field_value(obj: Mapping[str, Any], path: tuple[str, ...]) -> str:
    value: Any = obj
    for part in path:
        if not isinstance(value, Mapping):
            return ""
        value = value.get(part)
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def parse_field_selector(text: str | None) -> FieldSelector:
    """Parse a selector; an invalid one is the API's 400 Bad Request."""
    if not text or not text.strip():
        return FieldSelector(())
    requirements = []
    for term in _split_unescaped(text, ","):
        match = _TERM.match(term)
        if match is None:
            raise APIError(400, f"invalid field selector {text!r}: cannot parse term {term!r}")
        path, operator, raw_value = match.groups()
        requirements.append(
            FieldRequirement(tuple(path.split(".")), _unescape(raw_value), operator != "!=")
        )
    return FieldSelector(tuple(requirements))


def _split_unescaped(text: str, separator: str) -> list[str]:
    parts: list[str] = []
    current: list[str] = []
    escaped = False
    for char in text:
        if escaped:
            current.append(char)
            escaped = False
        elif char == "\\":
            current.append(char)
            escaped = True
        elif char == separator:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts


def _unescape(value: str) -> str:
    return re.sub(r"\\(.)", r"\1", value)
