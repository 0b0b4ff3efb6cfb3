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


@dataclass(frozen=True, slots=True)
class Toleration:
    key: str
    operator: str  # Equal (default) or Exists
    value: str
    effect: str  # "" tolerates every effect

    def tolerates(self, taint: Taint) -> bool:
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        # An empty key with operator Equal is invalid in the API; treat it as matching nothing.
        return bool(self.key) and self.value == taint.value


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


def tolerated(taint: Taint, tolerations: Iterable[Toleration]) -> bool:
    return any(t.tolerates(taint) for t in tolerations)


def first_untolerated(
    taints: Sequence[Taint], tolerations: Sequence[Toleration], effects: frozenset[str]
) -> Taint | None:
    """The first taint with one of `effects` that no toleration tolerates, else None."""
    for taint in taints:
        if taint.effect in effects and not tolerated(taint, tolerations):
            return taint
    return None
