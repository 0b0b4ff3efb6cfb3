"""Label selectors (metav1.LabelSelector) compiled once and matched many times."""

from __future__ import annotations

import re
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from scheduler.objects.names import label_value_problems
from scheduler.objects.names import qualified_name_problems


class SelectorError(ValueError):
    """A selector that the API server would reject."""


@dataclass(frozen=True, slots=True)
class Requirement:
    """One `key operator values` clause of a selector."""

    key: str
    operator: str  # In, NotIn, Exists, DoesNotExist (Gt/Lt only in node selectors)
    values: frozenset[str]

    def matches(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        if self.operator == "In":
            return present and labels[self.key] in self.values
        if self.operator == "NotIn":
            return not present or labels[self.key] not in self.values
        if self.operator == "Exists":
            return present
        if self.operator == "DoesNotExist":
            return not present
        if self.operator in ("Gt", "Lt"):
            if not present:
                return False
            try:
                actual = int(labels[self.key])
            except ValueError:
                return False
            (bound,) = (int(v) for v in self.values)
            return actual > bound if self.operator == "Gt" else actual < bound
        raise SelectorError(f"unknown operator {self.operator!r}")


_SET_OPERATORS = {"In", "NotIn", "Exists", "DoesNotExist"}


def make_requirement(raw: Mapping[str, Any], *, numeric: bool = False) -> Requirement:
    """Build and validate a requirement; `numeric` allows node selectors' Gt and Lt."""
    key = raw.get("key")
    operator = raw.get("operator")
    values = tuple(str(v) for v in raw.get("values") or ())
    if not key:
        raise SelectorError("key: Required value")
    allowed = _SET_OPERATORS | ({"Gt", "Lt"} if numeric else set())
    if operator not in allowed:
        raise SelectorError(f"operator: Unsupported value: {operator!r}")
    if operator in ("In", "NotIn") and not values:
        raise SelectorError(
            f"values: Required value: must be specified when `operator` is {operator}"
        )
    if operator in ("Exists", "DoesNotExist") and values:
        raise SelectorError(
            f"values: Forbidden: may not be specified when `operator` is {operator}"
        )
    if operator in ("Gt", "Lt"):
        if len(values) != 1:
            raise SelectorError(
                f"values: Required value: must be one integer for `operator` {operator}"
            )
        try:
            int(values[0])
        except ValueError as exc:
            raise SelectorError(
                f"values[0]: Invalid value: {values[0]!r}: must be an integer"
            ) from exc
    return Requirement(str(key), str(operator), frozenset(values))


# What Go's strconv.ParseInt(value, 10, 64) reads: an optional sign, decimal digits, 64 bits.
_GO_DECIMAL = re.compile(r"[+-]?[0-9]+")
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def builds_requirement(key: str, operator: str, values: Sequence[str]) -> bool:
    """Whether apimachinery's labels.NewRequirement builds `key operator values` (node selector
    operators): the key a label key, as many values as the operator wants, Gt's and Lt's one
    value a 64-bit integer, and every value a label value.

    Stricter than `make_requirement`, which checks what the API server validates: objects that
    passed it may still hold requirements this refuses, and upstream's matchers skip those."""
    if qualified_name_problems(key):
        return False
    if operator in ("In", "NotIn"):
        counted = bool(values)
    elif operator in ("Exists", "DoesNotExist"):
        counted = not values
    elif operator in ("Gt", "Lt"):
        counted = len(values) == 1 and all(_is_int64(value) for value in values)
    else:
        return False
    return counted and not any(label_value_problems(value) for value in values)


def _is_int64(value: str) -> bool:
    return _GO_DECIMAL.fullmatch(value) is not None and _INT64_MIN <= int(value) <= _INT64_MAX


@dataclass(frozen=True, slots=True)
class LabelSelector:
    """A compiled metav1.LabelSelector. `Nothing` (None in the API) is represented by `None`."""

    requirements: tuple[Requirement, ...]

    @property
    def is_everything(self) -> bool:
        return not self.requirements

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(r.matches(labels) for r in self.requirements)

    def cache_key(self) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
        return tuple((r.key, r.operator, tuple(sorted(r.values))) for r in self.requirements)


EVERYTHING = LabelSelector(())


def parse_label_selector(raw: Mapping[str, Any] | None) -> LabelSelector | None:
    """Compile a LabelSelector; None (absent) selects nothing, {} selects everything."""
    if raw is None:
        return None
    requirements = [
        Requirement(str(key), "In", frozenset([str(value)]))
        for key, value in sorted((raw.get("matchLabels") or {}).items())
    ]
    requirements.extend(make_requirement(expr) for expr in raw.get("matchExpressions") or ())
    return LabelSelector(tuple(requirements))


def selector_from_set(labels: Mapping[str, str]) -> LabelSelector:
    """A selector matching exactly the given key/value pairs (used for nodeSelector)."""
    return LabelSelector(
        tuple(Requirement(k, "In", frozenset([v])) for k, v in sorted(labels.items()))
    )


def merge_requirements(selector: LabelSelector, extra: Sequence[Requirement]) -> LabelSelector:
    return LabelSelector((*selector.requirements, *extra))
