"""What PreFilter leaves in the cycle state for the rest of the cycle and for preemption.

The quotas and their use (which the PreFilter extensions move as preemption's dry run adds and
removes pods), and three requests, combined as scheduler-plugins combines them: the pod's own
(its effective request, see `quota`); with the pods nominated in its namespace that are at
least as important (they take their place first); and with those and the pods nominated in
other namespaces still within their min (their share of the sum of mins is spoken for).
"""

from __future__ import annotations

from dataclasses import dataclass

from plugins.capacity_scheduling.quota import counted
from plugins.capacity_scheduling.quota import sum_of
from plugins.capacity_scheduling.usage import QuotaUsage
from scheduler.framework import Handle
from scheduler.framework import NodeTable
from scheduler.framework import Pod

STATE_KEY = "CapacityScheduling/quotas"


@dataclass(slots=True)
class QuotaState:
    usage: QuotaUsage
    request: dict[str, int]
    with_nominated_in_quota: dict[str, int]
    with_all_nominated: dict[str, int]

    def clone(self) -> QuotaState:
        # The requests are fixed for the cycle; only the use changes in a dry run.
        return QuotaState(
            self.usage.clone(),
            self.request,
            self.with_nominated_in_quota,
            self.with_all_nominated,
        )

    def within_quota(self, namespace: str, own: dict[str, int], overall: dict[str, int]) -> bool:
        """Whether the namespace's use with `own` stays within its max, and the use of all
        quotas with `overall` within the sum of their mins (True without a quota)."""
        quota = self.usage.quotas.get(namespace)
        if quota is None:
            return True
        if quota.over_max(self.usage.used_by(namespace), own):
            return False
        return not self.usage.over_total_min(overall)

    def beyond_min(self, namespace: str) -> bool:
        """Whether the namespace, with the pod and the nominated pods ahead of it, would use
        more than its min (so its own guarantee has not been lent out)."""
        quota = self.usage.quotas.get(namespace)
        if quota is None:
            return False
        return quota.over_min(self.usage.used_by(namespace), self.with_nominated_in_quota)


def quota_state(handle: Handle, table: NodeTable, usage: QuotaUsage, pod: Pod) -> QuotaState:
    request = counted(pod.requests)
    if pod.namespace not in usage.quotas:
        return QuotaState(usage, request, request, request)
    in_quota: list[dict[str, int]] = [request]
    others: list[dict[str, int]] = []
    for node_name in table.names:
        for nominated in handle.nominated_pods_for_node(node_name):
            quota = usage.quotas.get(nominated.namespace)
            if nominated.uid == pod.uid or quota is None:
                continue
            if nominated.namespace == pod.namespace:
                if nominated.priority >= pod.priority:
                    in_quota.append(counted(nominated.requests))
            elif not quota.over_min(usage.used_by(nominated.namespace)):
                others.append(counted(nominated.requests))
    own = sum_of(in_quota)
    return QuotaState(usage, request, own, sum_of([own, *others]))
