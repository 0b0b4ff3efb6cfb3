"""PodDisruptionBudgets as preemption reads them: which victims would break a budget.

Preemption does not evict through the eviction API, so budgets do not stop it; they only make
a victim less attractive. A victim violates a budget when taking it would push the budget's
`status.disruptionsAllowed` below zero, counting the victims of the same node in order.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from scheduler.framework import Lister
from scheduler.framework import Pod
from scheduler.objects.labels import LabelSelector
from scheduler.objects.labels import SelectorError
from scheduler.objects.labels import parse_label_selector
from scheduler.objects.raw import DEFAULT_NAMESPACE

PDB_RESOURCE = "poddisruptionbudgets"


@dataclass(frozen=True, slots=True)
class DisruptionBudget:
    """The parts of a policy/v1 PodDisruptionBudget preemption needs."""

    namespace: str
    # None when the budget selects nothing: no selector, an empty one, or an invalid one.
    selector: LabelSelector | None
    disruptions_allowed: int
    # Pods the API server already counted as disrupted (by name); not charged again.
    disrupted_pods: frozenset[str]

    def covers(self, pod: Pod) -> bool:
        if self.selector is None or pod.namespace != self.namespace:
            return False
        return self.selector.matches(pod.labels)

    @classmethod
    def from_dict(cls, raw: Mapping[str, Any]) -> DisruptionBudget:
        meta = raw.get("metadata") or {}
        spec = raw.get("spec") or {}
        status = raw.get("status") or {}
        return cls(
            namespace=str(meta.get("namespace") or DEFAULT_NAMESPACE),
            selector=_selector(spec.get("selector")),
            disruptions_allowed=int(status.get("disruptionsAllowed") or 0),
            disrupted_pods=frozenset(str(n) for n in status.get("disruptedPods") or {}),
        )


def _selector(raw: Mapping[str, Any] | None) -> LabelSelector | None:
    """Upstream treats a missing or empty selector as matching nothing here (not everything),
    and skips a selector it cannot parse."""
    try:
        selector = parse_label_selector(raw)
    except SelectorError:
        return None
    if selector is None or selector.is_everything:
        return None
    return selector


def list_budgets(lister: Lister) -> list[DisruptionBudget]:
    return [DisruptionBudget.from_dict(raw) for raw in lister.list()]


def split_by_violation(
    pods: Sequence[Pod], budgets: Sequence[DisruptionBudget]
) -> tuple[list[Pod], list[Pod]]:
    """(violating, non-violating) victims, each keeping the order of `pods`.

    Each pod covered by a budget spends one of its allowed disruptions (unless the API server
    already recorded it as disrupted); a pod that overdraws any budget is violating.
    """
    allowed = [b.disruptions_allowed for b in budgets]
    violating: list[Pod] = []
    non_violating: list[Pod] = []
    for pod in pods:
        violates = False
        # A pod without labels matches no selector.
        if pod.labels:
            for i, budget in _covering(budgets, pod):
                if pod.name in budget.disrupted_pods:
                    continue
                allowed[i] -= 1
                if allowed[i] < 0:
                    violates = True
        (violating if violates else non_violating).append(pod)
    return violating, non_violating


def _covering(
    budgets: Sequence[DisruptionBudget], pod: Pod
) -> Iterable[tuple[int, DisruptionBudget]]:
    return ((i, b) for i, b in enumerate(budgets) if b.covers(pod))
