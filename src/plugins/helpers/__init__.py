"""Pieces several in-tree plugins share: score normalization, vectorized node-affinity
matching, taint checks per taint set and the taint events, typed access to QueueingHint event
objects, and Filter/Score methods written against the Node."""

from plugins.helpers.event_objects import after_own_update
from plugins.helpers.event_objects import as_view
from plugins.helpers.event_objects import deleted_pod
from plugins.helpers.event_objects import node_change
from plugins.helpers.event_objects import pod_change
from plugins.helpers.node_affinity import RequiredNodeAffinity
from plugins.helpers.node_affinity import preferred_score
from plugins.helpers.node_affinity import preferred_scores
from plugins.helpers.node_methods import NODE_NOT_FOUND_MESSAGE
from plugins.helpers.node_methods import filter_on_node
from plugins.helpers.node_methods import score_on_node
from plugins.helpers.node_selector_mask import match_node_selector
from plugins.helpers.node_selector_mask import match_term
from plugins.helpers.normalize import DefaultNormalizer
from plugins.helpers.normalize import default_normalize_score
from plugins.helpers.taints import DO_NOT_SCHEDULE_EFFECTS
from plugins.helpers.taints import count_intolerable_prefer_no_schedule
from plugins.helpers.taints import prefer_no_schedule_tolerations
from plugins.helpers.taints import taint_events
from plugins.helpers.taints import untolerated_rows

__all__ = [
    "DO_NOT_SCHEDULE_EFFECTS",
    "NODE_NOT_FOUND_MESSAGE",
    "DefaultNormalizer",
    "RequiredNodeAffinity",
    "after_own_update",
    "as_view",
    "count_intolerable_prefer_no_schedule",
    "default_normalize_score",
    "deleted_pod",
    "filter_on_node",
    "match_node_selector",
    "match_term",
    "node_change",
    "pod_change",
    "prefer_no_schedule_tolerations",
    "preferred_score",
    "preferred_scores",
    "score_on_node",
    "taint_events",
    "untolerated_rows",
]
