"""InterPodAffinityArgs: the plugin's configuration (kind InterPodAffinityArgs)."""

from __future__ import annotations

from typing import Self

from pydantic import model_validator

from scheduler.framework import FieldErrors
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

    @model_validator(mode="after")
    def _validate(self) -> Self:
        errors = FieldErrors()
        weight = self.hard_pod_affinity_weight
        if not MIN_HARD_POD_AFFINITY_WEIGHT <= weight <= MAX_HARD_POD_AFFINITY_WEIGHT:
            errors.invalid(
                ("hardPodAffinityWeight",),
                weight,
                f"not in valid range [{MIN_HARD_POD_AFFINITY_WEIGHT}, "
                f"{MAX_HARD_POD_AFFINITY_WEIGHT}]",
            )
        errors.raise_if_any(type(self).__name__)
        return self
