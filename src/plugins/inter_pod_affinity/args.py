"""InterPodAffinityArgs: the plugin's configuration (kind InterPodAffinityArgs)."""

from __future__ import annotations

from pydantic import field_validator

from scheduler.framework import Int32
from scheduler.framework import PluginArgs

MIN_HARD_POD_AFFINITY_WEIGHT = 0
MAX_HARD_POD_AFFINITY_WEIGHT = 100


class InterPodAffinityArgs(PluginArgs):
    """Arguments of InterPodAffinity, with upstream's defaults."""

    # Score added to a node's topology domain for every existing pod there whose *required*
    # affinity term matches the incoming pod.
    hard_pod_affinity_weight: Int32 = 1
    # Skip scoring altogether (existing pods' preferred terms included) when the incoming pod
    # has no preferred inter-pod (anti-)affinity of its own: a throughput optimisation.
    ignore_preferred_terms_of_existing_pods: bool = False

    @field_validator("hard_pod_affinity_weight")
    @classmethod
    def _weight_in_range(cls, value: int) -> int:
        if not MIN_HARD_POD_AFFINITY_WEIGHT <= value <= MAX_HARD_POD_AFFINITY_WEIGHT:
            raise ValueError(
                f"not in valid range [{MIN_HARD_POD_AFFINITY_WEIGHT}, "
                f"{MAX_HARD_POD_AFFINITY_WEIGHT}]"
            )
        return value
