"""Taints, tolerations and the toleration rule."""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

NO_SCHEDULE = "NoSchedule"
PREFER_NO_SCHEDULE = "PreferNoSchedule"
NO_EXECUTE = "NoExecute"

# The taint the node lifecycle controller puts on a cordoned node (spec.unschedulable).
TAINT_NODE_UNSCHEDULABLE = "node.kubernetes.io/unschedulable"


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str
    effect: str

    def __str__(self) -> str:
        # Upstream's reason text renders a taint as {key: value}.
        return f"{{{self.key}: {self.value}}}"


# The feature gate that gives tolerations the operators Lt and Gt.
COMPARISON_OPERATORS_GATE = "TaintTolerationComparisonOperators"


@dataclass(frozen=True, slots=True)
class Toleration:
    key: str
    operator: str  # Equal (default), Exists, or with the gate above Lt and Gt
    value: str
    effect: str  # "" tolerates every effect

    def tolerates(self, taint: Taint, *, comparisons: bool = False) -> bool:
        """Whether this toleration tolerates `taint`; `comparisons` is whether Lt and Gt are
        known (TaintTolerationComparisonOperators). An operator not known matches nothing."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        operator = self.operator
        if operator == "Exists":
            return True
        if operator in ("Equal", ""):
            # An empty key with operator Equal is invalid in the API; it matches nothing.
            return bool(self.key) and self.value == taint.value
        if comparisons and operator in ("Lt", "Gt"):
            return _compares(operator, taint.value, self.value)
        return False


def _compares(operator: str, taint_value: str, toleration_value: str) -> bool:
    """The taint's value is less (Lt) or greater (Gt) than the toleration's, both read as
    decimal integers; a value that is not one tolerates nothing."""
    taint_number = decimal_integer(taint_value)
    bound = decimal_integer(toleration_value)
    if taint_number is None or bound is None:
        return False
    return taint_number < bound if operator == "Lt" else taint_number > bound


_INT64_MIN = -(2**63)
_INT64_MAX = 2**63 - 1


def decimal_integer(text: str) -> int | None:
    """`text` as a 64-bit integer written the plain way ("0", "42", "-7": no sign but a
    minus, no leading zero, no "-0"), as the API's comparison operators read values; else
    None."""
    digits = text[1:] if text.startswith("-") else text
    if not digits.isascii() or not digits.isdigit():
        return None
    if digits[0] == "0" and (len(digits) > 1 or text.startswith("-")):
        return None
    number = int(text)
    return number if _INT64_MIN <= number <= _INT64_MAX else None


def parse_taint(raw: Mapping[str, Any]) -> Taint:
    return Taint(
        str(raw.get("key", "")), str(raw.get("value", "") or ""), str(raw.get("effect", ""))
    )


def parse_toleration(raw: Mapping[str, Any]) -> Toleration:
    return Toleration(
        key=str(raw.get("key", "") or ""),
        operator=str(raw.get("operator", "") or "Equal"),
        value=str(raw.get("value", "") or ""),
        effect=str(raw.get("effect", "") or ""),
    )


def tolerated(
    taint: Taint, tolerations: Iterable[Toleration], *, comparisons: bool = False
) -> bool:
    return any(t.tolerates(taint, comparisons=comparisons) for t in tolerations)


def first_untolerated(
    taints: Sequence[Taint],
    tolerations: Sequence[Toleration],
    effects: frozenset[str],
    *,
    comparisons: bool = False,
) -> Taint | None:
    """The first taint with one of `effects` that no toleration tolerates, else None."""
    for taint in taints:
        if taint.effect in effects and not tolerated(taint, tolerations, comparisons=comparisons):
            return taint
    return None
