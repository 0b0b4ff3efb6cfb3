"""Node selectors and node affinity (v1.NodeSelector, v1.PreferredSchedulingTerm)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from scheduler.objects.integers import bounded_int
from scheduler.objects.labels import Requirement
from scheduler.objects.labels import SelectorError
from scheduler.objects.labels import make_requirement


@dataclass(frozen=True, slots=True)
class NodeSelectorTerm:
    """Expressions over labels ANDed with expressions over fields (only metadata.name)."""

    match_expressions: tuple[Requirement, ...]
    match_fields: tuple[Requirement, ...]

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        # A term with no requirements matches no objects (upstream's nodeaffinity semantics).
        if not self.match_expressions and not self.match_fields:
            return False
        if not all(r.matches(labels) for r in self.match_expressions):
            return False
        fields = {"metadata.name": node_name}
        return all(r.matches(fields) for r in self.match_fields)

    @property
    def uses_fields(self) -> bool:
        return bool(self.match_fields)


@dataclass(frozen=True, slots=True)
class NodeSelector:
    """Terms ORed together."""

    terms: tuple[NodeSelectorTerm, ...]

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        return any(term.matches(labels, node_name) for term in self.terms)

    @property
    def uses_fields(self) -> bool:
        return any(term.uses_fields for term in self.terms)


@dataclass(frozen=True, slots=True)
class PreferredTerm:
    weight: int
    term: NodeSelectorTerm


@dataclass(frozen=True, slots=True)
class NodeAffinity:
    required: NodeSelector | None
    preferred: tuple[PreferredTerm, ...]


def parse_term(raw: Mapping[str, Any]) -> NodeSelectorTerm:
    expressions = tuple(
        make_requirement(e, numeric=True) for e in raw.get("matchExpressions") or ()
    )
    fields = tuple(make_requirement(e, numeric=True) for e in raw.get("matchFields") or ())
    for requirement in fields:
        if requirement.key != "metadata.name":
            raise SelectorError(
                f"matchFields.key: Invalid value: {requirement.key!r}: must be 'metadata.name'"
            )
    return NodeSelectorTerm(expressions, fields)


def parse_node_selector(raw: Mapping[str, Any] | None) -> NodeSelector | None:
    if raw is None:
        return None
    terms = raw.get("nodeSelectorTerms") or ()
    return NodeSelector(tuple(parse_term(t) for t in terms))


def parse_node_affinity(raw: Mapping[str, Any] | None) -> NodeAffinity | None:
    if not raw:
        return None
    required = parse_node_selector(raw.get("requiredDuringSchedulingIgnoredDuringExecution"))
    preferred = tuple(
        PreferredTerm(
            bounded_int(p.get("weight", 0), 32, "weight"), parse_term(p.get("preference") or {})
        )
        for p in raw.get("preferredDuringSchedulingIgnoredDuringExecution") or ()
    )
    return NodeAffinity(required, preferred)
