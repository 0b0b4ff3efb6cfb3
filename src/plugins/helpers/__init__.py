"""Pieces several in-tree plugins share: score normalization, vectorized node-affinity
matching, taint checks per taint set and typed access to QueueingHint event objects."""

from plugins.helpers.event_objects import deleted_pod, node_change, pod_change
from plugins.helpers.node_affinity import (
    RequiredNodeAffinity,
    preferred_score,
    preferred_scores,
)
from plugins.helpers.node_selector_mask import match_node_selector, match_term
from plugins.helpers.normalize import DefaultNormalizer, default_normalize_score
from plugins.helpers.taints import (
    DO_NOT_SCHEDULE_EFFECTS,
    count_intolerable_prefer_no_schedule,
    prefer_no_schedule_tolerations,
    untolerated_rows,
)

NODE_NOT_FOUND_MESSAGE = "node not found"

__all__ = [
    "DO_NOT_SCHEDULE_EFFECTS",
    "NODE_NOT_FOUND_MESSAGE",
    "DefaultNormalizer",
    "RequiredNodeAffinity",
    "count_intolerable_prefer_no_schedule",
    "default_normalize_score",
    "deleted_pod",
    "match_node_selector",
    "match_term",
    "node_change",
    "pod_change",
    "prefer_no_schedule_tolerations",
    "preferred_score",
    "preferred_scores",
    "untolerated_rows",
]
