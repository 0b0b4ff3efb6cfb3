"""CapacityScheduling: namespaces share the cluster through ElasticQuotas (min guaranteed and
lent while unused, max never exceeded), and get lent capacity back by preemption."""

from __future__ import annotations

from plugins.capacity_scheduling import preemption
from plugins.capacity_scheduling.cycle_state import STATE_KEY
from plugins.capacity_scheduling.cycle_state import QuotaState
from plugins.capacity_scheduling.cycle_state import quota_state
from plugins.capacity_scheduling.preemption import quota_status
from plugins.capacity_scheduling.quota import ELASTIC_QUOTA_RESOURCE
from plugins.capacity_scheduling.quota import ElasticQuota
from plugins.capacity_scheduling.quota import parse_quota
from plugins.capacity_scheduling.status import run_status_loop
from plugins.capacity_scheduling.usage import QuotaUsage
from plugins.capacity_scheduling.usage import UsageCounter
from plugins.helpers.preemption import WAITING_FOR_PREEMPTION
from plugins.helpers.preemption import Evaluator
from plugins.helpers.preemption import PreemptingPostFilter
from plugins.helpers.preemption import Preemptor
from scheduler.framework import SUCCESS
from scheduler.framework import ActionType
from scheduler.framework import ClusterEvent
from scheduler.framework import ClusterEventWithHint
from scheduler.framework import CycleState
from scheduler.framework import EventResource
from scheduler.framework import Handle
from scheduler.framework import MetricSamples
from scheduler.framework import NodeInfo
from scheduler.framework import NodeStatusReader
from scheduler.framework import NodeTable
from scheduler.framework import PluginArgs
from scheduler.framework import Pod
from scheduler.framework import PreFilterExtensions
from scheduler.framework import PreFilterResult
from scheduler.framework import Status
from scheduler.objects.errors import InvalidObjectError
from scheduler.objects.resources import CPU


def base_units(resource: str, amount: int) -> float:
    """CPU in cores (the scheduler counts millicores), everything else as counted."""
    return amount / 1000 if resource == CPU else float(amount)


class CapacityScheduling(PreemptingPostFilter):
    name = "CapacityScheduling"

    def __init__(self, args: PluginArgs | None, handle: Handle) -> None:
        del args  # the plugin has no arguments
        self.handle = handle
        self.counter = UsageCounter()
        # Only the replica that schedules writes status.used, with or without pods pending.
        handle.start_when_leading("elasticquota-status", self._status_loop)
        preemptor = Preemptor(
            ineligibility=self._ineligibility,
            # Every node where preemption might help, from the first, as upstream's preemptor.
            candidate_window=lambda potential: (0, potential),
            select_victims=preemption.select_victims,
        )
        self.evaluator = Evaluator(handle, self.name, preemptor)

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
        quotas, problems = self.quotas()
        if pod.namespace not in quotas:
            bad = [p for p in problems if p.startswith(f"ElasticQuota {pod.namespace}/")]
            if bad:
                return None, Status.unresolvable(*bad)
        quotas_now = quota_state(self.handle, table, self.counter.usage(table, quotas), pod)
        state.write(STATE_KEY, quotas_now)
        return None, quota_status(quotas_now, pod)

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return self

    def add_pod(self, state: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo) -> Status:
        quotas = state.get(STATE_KEY, QuotaState)
        if quotas is not None:
            quotas.usage.add(pod_to_add)
        return SUCCESS

    def remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status:
        quotas = state.get(STATE_KEY, QuotaState)
        if quotas is not None:
            quotas.usage.add(pod_to_remove, -1)
        return SUCCESS

    # ---- Reserve / Unreserve -------------------------------------------------------------

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        # The cache assumed the pod on its node before Reserve: the next count includes it.
        return SUCCESS

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        # The cache forgets the pod after Unreserve: the next count leaves it out.
        return None

    # ---- PostFilter ----------------------------------------------------------------------

    def _ineligibility(self, state: CycleState, pod: Pod, statuses: NodeStatusReader) -> str:
        if self.evaluator.executor.is_running(pod.uid):
            # Its victims' deletions are still being sent: choosing more now would take two
            # nodes' worth of pods for one.
            return WAITING_FOR_PREEMPTION
        return preemption.ineligibility(self.handle, state, pod, statuses)

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
