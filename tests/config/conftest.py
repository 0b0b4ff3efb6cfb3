"""A small fake plugin registry for the configuration tests.

The plugin classes only declare the extension-point methods they implement (that is all the
configuration looks at); names match upstream default plugins so the default set applies.
"""

from __future__ import annotations

from typing import Any
from typing import Literal

import pytest
from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import Field
from pydantic.alias_generators import to_camel

from scheduler.framework import PluginArgs
from scheduler.framework import PluginSpec


class _Plugin:
    name = ""

    def __init__(self, args: object, handle: object) -> None:
        self.args = args


class QueueSortPlugin(_Plugin):
    def less(self, a: object, b: object) -> bool:
        return False


class PreEnqueuePlugin(_Plugin):
    def pre_enqueue(self, pod: object) -> None: ...


class FilterPlugin(_Plugin):
    def filter(self, *args: object) -> None: ...


class ScorePlugin(_Plugin):
    def score(self, *args: object) -> None: ...

    def score_extensions(self) -> None: ...


class FilterScorePlugin(FilterPlugin, ScorePlugin):
    def pre_score(self, *args: object) -> None: ...


class PreFilterFilterScorePlugin(FilterScorePlugin):
    def pre_filter(self, *args: object) -> None: ...

    def pre_filter_extensions(self) -> None: ...


class PostFilterPlugin(_Plugin):
    def post_filter(self, *args: object) -> None: ...


class ReservePermitPlugin(_Plugin):
    def reserve(self, *args: object) -> None: ...

    def unreserve(self, *args: object) -> None: ...

    def permit(self, *args: object) -> None: ...


class BindPlugin(_Plugin):
    async def bind(self, *args: object) -> None: ...


class NodeAffinityArgs(PluginArgs):
    added_affinity: dict[str, Any] | None = None


class _Nested(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid")


class ResourceSpec(_Nested):
    name: str
    weight: int = Field(default=1, gt=0, le=100)


class ScoringStrategy(_Nested):
    type: Literal["LeastAllocated", "MostAllocated", "RequestedToCapacityRatio"] = "LeastAllocated"
    resources: list[ResourceSpec] = Field(
        default_factory=lambda: [ResourceSpec(name="cpu"), ResourceSpec(name="memory")]
    )


class NodeResourcesFitArgs(PluginArgs):
    ignored_resources: list[str] = Field(default_factory=list)
    scoring_strategy: ScoringStrategy = Field(default_factory=ScoringStrategy)


class InterPodAffinityArgs(PluginArgs):
    hard_pod_affinity_weight: int = Field(default=1, ge=0, le=100)
    ignore_preferred_terms_of_existing_pods: bool = False


class DefaultPreemptionArgs(PluginArgs):
    min_candidate_nodes_percentage: int = Field(default=10, ge=0, le=100)
    min_candidate_nodes_absolute: int = Field(default=100, ge=0)


class CustomSortArgs(PluginArgs):
    order: Literal["priority", "fifo"] = "priority"


def _spec(name: str, plugin_class: type, args_model: type[PluginArgs] | None = None) -> PluginSpec:
    return PluginSpec(name=name, plugin_class=plugin_class, args_model=args_model)


def make_registry() -> dict[str, PluginSpec]:
    specs = [
        _spec("SchedulingGates", PreEnqueuePlugin),
        _spec("PrioritySort", QueueSortPlugin),
        _spec("NodeUnschedulable", FilterPlugin),
        _spec("TaintToleration", FilterScorePlugin),
        _spec("NodeAffinity", PreFilterFilterScorePlugin, NodeAffinityArgs),
        _spec("NodeResourcesFit", PreFilterFilterScorePlugin, NodeResourcesFitArgs),
        _spec("InterPodAffinity", PreFilterFilterScorePlugin, InterPodAffinityArgs),
        _spec("DefaultPreemption", PostFilterPlugin, DefaultPreemptionArgs),
        _spec("ImageLocality", ScorePlugin),
        _spec("DefaultBinder", BindPlugin),
        # Not upstream defaults: for enabling and replacing plugins.
        _spec("CustomScore", ScorePlugin),
        _spec("CustomFilter", FilterPlugin),
        _spec("CustomSort", QueueSortPlugin, CustomSortArgs),
        _spec("CustomBinder", BindPlugin),
        _spec("CustomReserve", ReservePermitPlugin),
    ]
    return {spec.name: spec for spec in specs}


@pytest.fixture
def registry() -> dict[str, PluginSpec]:
    return make_registry()
