"""What every plugin Handle answers the same way, whoever builds it.

The scheduler's Handle and the test kit's Handle differ in where nodes, listers, waiting pods
and Events come from, but not in the profile's fixed facts (name, clock, random source,
parallelism, the API plugins write through, the HTTP extenders) nor in how a plugin runs the
profile's Filter chain on a hypothetical node, as preemption's dry run does. Those live here,
once.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Final
from typing import TypedDict
from typing import Unpack

from scheduler.config.feature_gates import FeatureGates
from scheduler.framework.clock import Clock
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.extenders import NO_EXTENDERS
from scheduler.framework.extenders import Extenders
from scheduler.framework.handle import ClusterAPI
from scheduler.framework.handle import PluginMetrics
from scheduler.framework.node_info import NodeInfo
from scheduler.framework.status import Status
from scheduler.objects.pod import Pod
from scheduler.runtime.node_filter import FilterChain


class ProfileFacts(TypedDict):
    """What a Handle tells every plugin of its profile, fixed for the handle's life."""

    profile_name: str
    clock: Clock
    rng: random.Random
    parallelism: int


class HandleBase:
    """The shared half of a `scheduler.framework.handle.Handle`; a subclass supplies the
    Filter chain (`_filter_chain`), the nominated pods and everything else the Handle asks."""

    def __init__(
        self,
        *,
        api: ClusterAPI,
        plugin_metrics: PluginMetrics,
        extenders: Extenders = NO_EXTENDERS,
        features: FeatureGates | None = None,
        **facts: Unpack[ProfileFacts],
    ) -> None:
        self._features = features or FeatureGates()
        # Fixed for the handle's life; Final so that nothing assigns them by mistake.
        self.profile_name: Final = facts["profile_name"]
        self.clock: Final = facts["clock"]
        self.rng: Final = facts["rng"]
        self.parallelism: Final = facts["parallelism"]
        self.api: Final = api
        self.plugin_metrics: Final = plugin_metrics
        self.extenders: Final[Extenders] = extenders

    def feature_enabled(self, gate: str) -> bool:
        return self._features.enabled(gate)

    def _filter_chain(self) -> FilterChain:
        """The profile's PreFilter and Filter plugins."""
        raise NotImplementedError

    def nominated_pods_for_node(self, node_name: str) -> Sequence[Pod]:
        raise NotImplementedError

    def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> Status:
        return self._filter_chain().run_with_nominated(
            state, pod, node_info, self.nominated_pods_for_node(node_info.name)
        )

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo
    ) -> Status:
        return self._filter_chain().add_pod(state, pod, pod_to_add, node_info)

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status:
        return self._filter_chain().remove_pod(state, pod, pod_to_remove, node_info)
