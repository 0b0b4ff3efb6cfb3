"""Inter-pod affinity terms, compiled with the namespaces they apply to."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from scheduler.objects.integers import bounded_int
from scheduler.objects.labels import LabelSelector
from scheduler.objects.labels import Requirement
from scheduler.objects.labels import merge_requirements
from scheduler.objects.labels import parse_label_selector


@dataclass(frozen=True, slots=True)
class AffinityTerm:
    """A PodAffinityTerm of some pod, with its namespaces resolved.

    `namespaces` empty with no namespace selector means the owning pod's namespace, which the
    parser fills in. A namespace selector of {} selects every namespace.
    """

    selector: LabelSelector | None  # None selects nothing
    namespaces: frozenset[str]
    namespace_selector: LabelSelector | None
    topology_key: str

    def matches_namespace(self, namespace: str, namespace_labels: Mapping[str, str] | None) -> bool:
        if namespace in self.namespaces:
            return True
        if self.namespace_selector is None:
            return False
        if self.namespace_selector.is_everything:
            return True
        return namespace_labels is not None and self.namespace_selector.matches(namespace_labels)

    def matches_pod(
        self,
        namespace: str,
        labels: Mapping[str, str],
        namespace_labels: Mapping[str, str] | None,
    ) -> bool:
        if self.selector is None or not self.matches_namespace(namespace, namespace_labels):
            return False
        return self.selector.matches(labels)


@dataclass(frozen=True, slots=True)
class WeightedAffinityTerm:
    weight: int
    term: AffinityTerm


@dataclass(frozen=True, slots=True)
class PodAffinity:
    required: tuple[AffinityTerm, ...]
    preferred: tuple[WeightedAffinityTerm, ...]

    @property
    def empty(self) -> bool:
        return not self.required and not self.preferred


def parse_affinity_term(
    raw: Mapping[str, Any], namespace: str, labels: Mapping[str, str]
) -> AffinityTerm:
    selector = parse_label_selector(raw.get("labelSelector"))
    # matchLabelKeys / mismatchLabelKeys add the pod's own label values to the selector.
    extra: list[Requirement] = []
    for key in raw.get("matchLabelKeys") or ():
        if key in labels:
            extra.append(Requirement(key, "In", frozenset([labels[key]])))
    for key in raw.get("mismatchLabelKeys") or ():
        if key in labels:
            extra.append(Requirement(key, "NotIn", frozenset([labels[key]])))
    if extra and selector is not None:
        selector = merge_requirements(selector, extra)
    namespaces = frozenset(raw.get("namespaces") or ())
    namespace_selector = parse_label_selector(raw.get("namespaceSelector"))
    if not namespaces and namespace_selector is None:
        namespaces = frozenset([namespace])
    return AffinityTerm(selector, namespaces, namespace_selector, str(raw.get("topologyKey", "")))


def parse_pod_affinity(
    raw: Mapping[str, Any] | None, namespace: str, labels: Mapping[str, str]
) -> PodAffinity | None:
    if not raw:
        return None
    required = tuple(
        parse_affinity_term(t, namespace, labels)
        for t in raw.get("requiredDuringSchedulingIgnoredDuringExecution") or ()
    )
    preferred = tuple(
        WeightedAffinityTerm(
            bounded_int(w.get("weight", 0), 32, "weight"),
            parse_affinity_term(w.get("podAffinityTerm") or {}, namespace, labels),
        )
        for w in raw.get("preferredDuringSchedulingIgnoredDuringExecution") or ()
    )
    affinity = PodAffinity(required, preferred)
    return None if affinity.empty else affinity
