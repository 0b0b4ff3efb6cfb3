"""CapacityScheduling's own preemption: reclaim lent capacity, else make room in the namespace.

When the preemptor's namespace, with the pod, stays within its min, its guarantee has been lent
out: victims may be pods of other quota'd namespaces that use more than their min, and
lower-priority pods of its own namespace. Otherwise only lower-priority pods of its own
namespace may go. Per node, as upstream: remove every potential victim, check the pod fits
(every Filter plugin, and the quotas), then give back the most important victims while it
still fits. The node needing the fewest, least important victims wins.
"""

from __future__ import annotations

from dataclasses import dataclass

from plugins.capacity_scheduling.quota import counted
from plugins.capacity_scheduling.usage import QuotaUsage
from scheduler.framework import CycleState
from scheduler.framework import Handle
from scheduler.framework import NodeInfo
from scheduler.framework import Pod
from scheduler.framework import Status


@dataclass(frozen=True, slots=True)
class Choice:
    node_name: str
    victims: tuple[Pod, ...]

    def cost(self) -> tuple[int, int, int]:
        # Least important first: the highest victim priority, then their sum, then how many.
        top = max(v.priority for v in self.victims)
        return top, sum(v.priority for v in self.victims), len(self.victims)


def quota_status(usage: QuotaUsage, pod: Pod) -> Status:
    """Whether `pod` may join its namespace's usage: under max, and borrowing only unused min."""
    quota = usage.quotas.get(pod.namespace)
    if quota is None:
        return Status()
    request = _counted(pod)
    over = quota.over_max(usage.used_with(pod.namespace, request))
    if over:
        return Status.unschedulable(
            f"Pod {pod.key} is rejected in PreFilter because ElasticQuota {quota.namespace}/"
            f"{quota.name} would pass its max of {', '.join(over)}"
        )
    over = usage.over_total_min(request)
    if over:
        return Status.unschedulable(
            f"Pod {pod.key} is rejected in PreFilter because the use of all ElasticQuotas would "
            f"pass the sum of their mins of {', '.join(over)}"
        )
    return Status()


def _counted(pod: Pod) -> dict[str, int]:
    return counted(pod.requests)


def _potential_victims(usage: QuotaUsage, pod: Pod, info: NodeInfo) -> list[Pod]:
    quota = usage.quotas[pod.namespace]
    guaranteed = not quota.over_min(usage.used_with(pod.namespace, _counted(pod)))
    victims = []
    for other in info.pods.values():
        if other.namespace == pod.namespace:
            if other.priority < pod.priority:
                victims.append(other)
        elif guaranteed:
            lender = usage.quotas.get(other.namespace)
            if lender is not None and lender.over_min(usage.used.get(other.namespace, {})):
                victims.append(other)
    return victims


def _fits(handle: Handle, state: CycleState, usage: QuotaUsage, pod: Pod, info: NodeInfo) -> bool:
    if not quota_status(usage, pod).is_success:
        return False
    return handle.run_filter_plugins_with_nominated_pods(state, pod, info).is_success


def select_on_node(
    handle: Handle, state: CycleState, usage: QuotaUsage, pod: Pod, live: NodeInfo
) -> Choice | None:
    info = live.clone()
    state = state.clone()
    usage = usage.clone()
    candidates = _potential_victims(usage, pod, live)
    if not candidates:
        return None
    for victim in candidates:
        info.remove_pod(victim.key)
        usage.add(victim, -1)
        handle.run_pre_filter_extension_remove_pod(state, pod, victim, info)
    if not _fits(handle, state, usage, pod, info):
        return None
    victims = []
    # Most important first get their place back if the pod still fits with them.
    for victim in sorted(candidates, key=lambda p: (-p.priority, p.key)):
        info.add_pod(victim)
        usage.add(victim)
        handle.run_pre_filter_extension_add_pod(state, pod, victim, info)
        if _fits(handle, state, usage, pod, info):
            continue
        info.remove_pod(victim.key)
        usage.add(victim, -1)
        handle.run_pre_filter_extension_remove_pod(state, pod, victim, info)
        victims.append(victim)
    return Choice(live.name, tuple(victims)) if victims else None


def best_choice(
    handle: Handle, state: CycleState, usage: QuotaUsage, pod: Pod, nodes: list[str]
) -> Choice | None:
    best: Choice | None = None
    for name in nodes:
        live = handle.node_info(name)
        if live is None:
            continue
        choice = select_on_node(handle, state, usage, pod, live)
        if choice is not None and (best is None or choice.cost() < best.cost()):
            best = choice
    return best
