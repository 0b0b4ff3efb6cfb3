"""CapacityScheduling: namespaces share the cluster through ElasticQuotas (min guaranteed and
lent while unused, max never exceeded), and get lent capacity back by preemption."""

from __future__ import annotations

import contextlib

from plugins.capacity_scheduling.preemption import best_choice
from plugins.capacity_scheduling.preemption import quota_status
from plugins.capacity_scheduling.quota import ELASTIC_QUOTA_RESOURCE
from plugins.capacity_scheduling.quota import ElasticQuota
from plugins.capacity_scheduling.quota import parse_quota
from plugins.capacity_scheduling.status import run_status_loop
from plugins.capacity_scheduling.usage import QuotaUsage
from plugins.capacity_scheduling.usage import UsageCounter
from scheduler.framework import SUCCESS
from scheduler.framework import ActionType
from scheduler.framework import ClusterEvent
from scheduler.framework import ClusterEventWithHint
from scheduler.framework import Code
from scheduler.framework import CycleState
from scheduler.framework import EventResource
from scheduler.framework import Handle
from scheduler.framework import MetricSamples
from scheduler.framework import NodeInfo
from scheduler.framework import NodeStatusReader
from scheduler.framework import NodeTable
from scheduler.framework import PluginArgs
from scheduler.framework import Pod
from scheduler.framework import PostFilterResult
from scheduler.framework import PreFilterExtensions
from scheduler.framework import PreFilterResult
from scheduler.framework import Status
from scheduler.framework.errors import APIError
from scheduler.objects.errors import InvalidObjectError
from scheduler.objects.resources import CPU


def base_units(resource: str, amount: int) -> float:
    """CPU in cores (the scheduler counts millicores), everything else as counted."""
    return amount / 1000 if resource == CPU else float(amount)


_STATE_KEY = "CapacityScheduling/usage"


class CapacityScheduling:
    name = "CapacityScheduling"

    def __init__(self, args: PluginArgs | None, handle: Handle) -> None:
        del args  # the plugin has no arguments
        self.handle = handle
        self.counter = UsageCounter()
        self._status_loop_started = False

    def quotas(self) -> tuple[dict[str, ElasticQuota], list[str]]:
        """Quotas by namespace, and messages for the ones that cannot be read."""
        quotas: dict[str, ElasticQuota] = {}
        problems = []
        for raw in self.handle.lister(ELASTIC_QUOTA_RESOURCE).list():
            try:
                quota = parse_quota(raw)
            except InvalidObjectError as exc:
                problems.append(str(exc))
                continue
            quotas[quota.namespace] = quota
        return quotas, problems

    def usage(self) -> QuotaUsage:
        return self.counter.usage(self.handle.node_table, self.quotas()[0])

    # ---- PreFilter -----------------------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: Pod, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status]:
        if not self._status_loop_started:
            # Scheduling cycles run on the leader only, so only the leader writes status.used.
            self._status_loop_started = True
            self.handle.start_background("elasticquota-status", self._status_loop)
        quotas, problems = self.quotas()
        if pod.namespace not in quotas:
            bad = [p for p in problems if p.startswith(f"ElasticQuota {pod.namespace}/")]
            if bad:
                return None, Status.unresolvable(*bad)
            return None, SUCCESS
        usage = self.counter.usage(table, quotas)
        # Pods nominated to nodes, as important as this one, will take their share first.
        for node_name in table.names:
            for nominated in self.handle.nominated_pods_for_node(node_name):
                if nominated.uid != pod.uid and nominated.priority >= pod.priority:
                    usage.add(nominated)
        state.write(_STATE_KEY, usage)
        return None, quota_status(usage, pod)

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return self

    def add_pod(self, state: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo) -> Status:
        usage = state.get(_STATE_KEY, QuotaUsage)
        if usage is not None:
            usage.add(pod_to_add)
        return SUCCESS

    def remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status:
        usage = state.get(_STATE_KEY, QuotaUsage)
        if usage is not None:
            usage.add(pod_to_remove, -1)
        return SUCCESS

    # ---- Reserve / Unreserve -------------------------------------------------------------

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        # The cache assumed the pod on its node before Reserve: the next count includes it.
        return SUCCESS

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        # The cache forgets the pod after Unreserve: the next count leaves it out.
        return None

    # ---- PostFilter ----------------------------------------------------------------------

    def post_filter(
        self, state: CycleState, pod: Pod, statuses: NodeStatusReader
    ) -> tuple[PostFilterResult | None, Status]:
        quotas = self.quotas()[0]
        if pod.namespace not in quotas:
            return None, Status.unschedulable("the pod's namespace has no ElasticQuota")
        if pod.preemption_policy == "Never":
            return None, Status.unschedulable("not eligible due to preemptionPolicy=Never.")
        table = self.handle.node_table
        unresolvable = set(statuses.nodes_with_code(int(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)))
        nodes = [name for name in table.names if name not in unresolvable]
        usage = state.get(_STATE_KEY, QuotaUsage) or self.counter.usage(table, quotas)
        choice = best_choice(self.handle, state, usage, pod, nodes)
        if choice is None:
            return PostFilterResult(nominated_node_name=""), Status.unschedulable(
                "no node where preempting pods under the ElasticQuota rules makes room"
            )
        for victim in choice.victims:
            self._evict(victim, pod, choice.node_name)
        return PostFilterResult(nominated_node_name=choice.node_name), SUCCESS

    def _evict(self, victim: Pod, preemptor: Pod, node_name: str) -> None:
        handle = self.handle
        handle.record_event(
            victim,
            event_type="Normal",
            reason="Preempted",
            action="Preempting",
            note=f"Preempted by pod {preemptor.uid} on node {node_name}",
            related=preemptor,
        )

        async def delete() -> None:
            # Already gone, or replaced: nothing is left to free.
            with contextlib.suppress(APIError):
                await handle.api.delete_pod(victim.namespace, victim.name, victim.uid)

        handle.start_background(f"preempt:{victim.key}", delete)

    async def _status_loop(self) -> None:
        await run_status_loop(self.handle, self.usage)

    def metric_samples(self) -> MetricSamples:
        usage = self.usage()
        samples: dict[str, list[tuple[tuple[str, str], float]]] = {}
        for family, amounts in (
            ("scheduler_elasticquota_used", usage.used),
            ("scheduler_elasticquota_min", {ns: dict(q.min) for ns, q in usage.quotas.items()}),
            ("scheduler_elasticquota_max", {ns: dict(q.max) for ns, q in usage.quotas.items()}),
        ):
            samples[family] = [
                ((namespace, resource), base_units(resource, amount))
                for namespace, by_resource in sorted(amounts.items())
                for resource, amount in sorted(by_resource.items())
            ]
        return samples

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return [
            # Room in a quota comes back when its pods go, and with quota changes.
            ClusterEventWithHint(ClusterEvent(EventResource.ASSIGNED_POD, ActionType.DELETE)),
            ClusterEventWithHint(ClusterEvent(EventResource.ELASTIC_QUOTA, ActionType.ALL)),
            ClusterEventWithHint(ClusterEvent(EventResource.NODE, ActionType.ADD)),
        ]
