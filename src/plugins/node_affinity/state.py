"""What NodeAffinity keeps in CycleState between PreFilter/PreScore and Filter/Score."""

from __future__ import annotations

from dataclasses import dataclass

from plugins.helpers import RequiredNodeAffinity
from scheduler.framework import Pod
from scheduler.objects.node_selector import PreferredTerm

PRE_FILTER_STATE_KEY = "PreFilterNodeAffinity"
PRE_SCORE_STATE_KEY = "PreScoreNodeAffinity"


@dataclass(frozen=True, slots=True)
class PreFilterState:
    """The pod's nodeSelector and required node affinity, compiled once per cycle."""

    required: RequiredNodeAffinity


@dataclass(frozen=True, slots=True)
class PreScoreState:
    """The pod's own preferred terms (the profile's added ones live on the plugin)."""

    preferred: tuple[PreferredTerm, ...]


def pod_preferred_terms(pod: Pod) -> tuple[PreferredTerm, ...]:
    affinity = pod.node_affinity
    return affinity.preferred if affinity is not None else ()
