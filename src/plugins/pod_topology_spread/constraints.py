"""A pod's topology spread constraints, parsed into the form the plugin evaluates.

Defaults follow the API: minDomains 1, nodeAffinityPolicy Honor, nodeTaintsPolicy Ignore.
`matchLabelKeys` adds `key In (value)` for every listed key the pod carries, ahead of the
constraint's own selector; a constraint without a labelSelector keeps selecting nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from typing import Final

from scheduler.objects.labels import LabelSelector
from scheduler.objects.labels import Requirement
from scheduler.objects.labels import parse_label_selector
from scheduler.objects.node import HOSTNAME_LABEL
from scheduler.objects.node import ZONE_LABEL

DO_NOT_SCHEDULE: Final = "DoNotSchedule"
SCHEDULE_ANYWAY: Final = "ScheduleAnyway"
HONOR: Final = "Honor"
IGNORE: Final = "Ignore"

# Applied to pods without constraints of their own when defaultingType is System. Upstream
# lists hostname first; the order is kept because Score sums the constraints in order.
SYSTEM_DEFAULT_CONSTRAINTS: Final[tuple[Mapping[str, Any], ...]] = (
    {"maxSkew": 3, "topologyKey": HOSTNAME_LABEL, "whenUnsatisfiable": SCHEDULE_ANYWAY},
    {"maxSkew": 5, "topologyKey": ZONE_LABEL, "whenUnsatisfiable": SCHEDULE_ANYWAY},
)


@dataclass(frozen=True, slots=True)
class SpreadConstraint:
    """One constraint with its selector compiled; `selector` None selects no pod at all."""

    max_skew: int
    topology_key: str
    selector: LabelSelector | None
    min_domains: int = 1
    honor_node_affinity: bool = True
    honor_node_taints: bool = False

    def selects(self, labels: Mapping[str, str]) -> bool:
        """Whether a pod with `labels` is one of the pods this constraint spreads."""
        return self.selector is not None and self.selector.matches(labels)

    def with_selector(self, selector: LabelSelector) -> SpreadConstraint:
        return SpreadConstraint(
            self.max_skew,
            self.topology_key,
            selector,
            self.min_domains,
            self.honor_node_affinity,
            self.honor_node_taints,
        )

    @property
    def counts_existing_pods(self) -> bool:
        # Upstream counts no existing pod for an empty selector (it would match every pod),
        # although the incoming pod still matches it.
        return self.selector is not None and bool(self.selector.requirements)

    @property
    def is_hostname(self) -> bool:
        return self.topology_key == HOSTNAME_LABEL


def _with_match_label_keys(
    selector: LabelSelector | None, keys: Iterable[str], pod_labels: Mapping[str, str]
) -> LabelSelector | None:
    if selector is None:
        return None
    pairs = sorted({key: pod_labels[key] for key in keys if key in pod_labels}.items())
    if not pairs:
        return selector
    extra = tuple(Requirement(key, "In", frozenset([value])) for key, value in pairs)
    return LabelSelector((*extra, *selector.requirements))


def parse_constraint(raw: Mapping[str, Any], pod_labels: Mapping[str, str]) -> SpreadConstraint:
    """Compile one `topologySpreadConstraints` entry; SelectorError for a bad selector."""
    selector = parse_label_selector(raw.get("labelSelector"))
    min_domains = raw.get("minDomains")
    return SpreadConstraint(
        max_skew=int(raw.get("maxSkew") or 0),
        topology_key=str(raw.get("topologyKey") or ""),
        selector=_with_match_label_keys(selector, raw.get("matchLabelKeys") or (), pod_labels),
        min_domains=1 if min_domains is None else int(min_domains),
        honor_node_affinity=(raw.get("nodeAffinityPolicy") or HONOR) == HONOR,
        honor_node_taints=(raw.get("nodeTaintsPolicy") or IGNORE) == HONOR,
    )


def constraints_for_action(
    raws: Iterable[Mapping[str, Any]], pod_labels: Mapping[str, str], action: str
) -> tuple[SpreadConstraint, ...]:
    """The entries whose whenUnsatisfiable is `action`, compiled, in their given order."""
    return tuple(
        parse_constraint(raw, pod_labels) for raw in raws if raw.get("whenUnsatisfiable") == action
    )


def topology_keys(constraints: Iterable[SpreadConstraint]) -> tuple[str, ...]:
    return tuple(c.topology_key for c in constraints)


def has_all_keys(labels: Mapping[str, str], constraints: Iterable[SpreadConstraint]) -> bool:
    return all(c.topology_key in labels for c in constraints)
