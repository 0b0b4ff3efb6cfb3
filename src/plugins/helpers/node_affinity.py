"""A pod's node constraints (nodeSelector AND required node affinity) and preferred terms,
per node and vectorized over the node table."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from plugins.helpers.node_selector_mask import BoolArray
from plugins.helpers.node_selector_mask import match_node_selector
from plugins.helpers.node_selector_mask import match_term
from scheduler.framework import NodeTable
from scheduler.objects.labels import LabelSelector
from scheduler.objects.labels import selector_from_set
from scheduler.objects.node import Node
from scheduler.objects.node_selector import NodeSelector
from scheduler.objects.node_selector import PreferredTerm
from scheduler.objects.pod import Pod

Int64Array = npt.NDArray[np.int64]


@dataclass(frozen=True, slots=True)
class RequiredNodeAffinity:
    """What a node must satisfy for a pod: its nodeSelector and its required node affinity.

    Either part may be absent (None), in which case it places no constraint.
    """

    node_selector: LabelSelector | None
    required: NodeSelector | None

    @classmethod
    def of_pod(cls, pod: Pod) -> RequiredNodeAffinity:
        labels = selector_from_set(pod.node_selector) if pod.node_selector else None
        affinity = pod.node_affinity
        return cls(labels, affinity.required if affinity is not None else None)

    @property
    def is_empty(self) -> bool:
        return self.node_selector is None and self.required is None

    def matches(self, node: Node) -> bool:
        if self.node_selector is not None and not self.node_selector.matches(node.labels):
            return False
        return self.required is None or self.required.matches(node.labels, node.name)

    def match_rows(self, table: NodeTable) -> BoolArray:
        """A fresh mask over all rows of `table` (safe to modify)."""
        mask = np.ones(table.size, dtype=np.bool_)
        if self.node_selector is not None:
            mask &= table.match_selector(self.node_selector)
        if self.required is not None:
            mask &= match_node_selector(table, self.required)
        return mask


def preferred_score(terms: Iterable[PreferredTerm], node: Node) -> int:
    """Sum of the weights of the preferred terms `node` matches."""
    return sum(p.weight for p in terms if p.term.matches(node.labels, node.name))


def preferred_scores(table: NodeTable, terms: Iterable[PreferredTerm]) -> Int64Array:
    """`preferred_score` for every row of `table`."""
    scores = np.zeros(table.size, dtype=np.int64)
    for preferred in terms:
        if preferred.weight:
            scores += np.int64(preferred.weight) * match_term(table, preferred.term)
    return scores
