"""Build the scorer named by scoringStrategy.type."""

from __future__ import annotations

from plugins.node_resources_fit.args import LEAST_ALLOCATED
from plugins.node_resources_fit.args import MOST_ALLOCATED
from plugins.node_resources_fit.args import REQUESTED_TO_CAPACITY_RATIO
from plugins.node_resources_fit.args import ScoringStrategy
from plugins.node_resources_fit.least_allocated import least_allocated_scorer
from plugins.node_resources_fit.most_allocated import most_allocated_scorer
from plugins.node_resources_fit.requested_to_capacity_ratio import RequestedToCapacityRatioScorer
from plugins.node_resources_fit.scorer import ResourceScorer


def build_scorer(strategy: ScoringStrategy) -> ResourceScorer:
    weights = [resource.weight for resource in strategy.resources]
    if strategy.type == LEAST_ALLOCATED:
        return least_allocated_scorer(weights)
    if strategy.type == MOST_ALLOCATED:
        return most_allocated_scorer(weights)
    if strategy.type == REQUESTED_TO_CAPACITY_RATIO:
        return RequestedToCapacityRatioScorer(weights, strategy.shape)
    raise ValueError(f"scoring strategy {strategy.type} is not supported")
