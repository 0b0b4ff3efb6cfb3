"""The nearest changes to a pod that would let it schedule, each one verified.

Every suggestion is a JSON merge patch of the pod. Before it is shown, the patch is applied to
a copy of the pod and the whole PreFilter and Filter chain is run again over every node; the
suggestion lists the nodes that then pass, and one with no such node is dropped. Only pod-side
changes are proposed: smaller requests, tolerations, a looser node selector or affinity, and a
higher priority (preemption). Nodes are considered for a change only when that change is all
that stands in their way (every other Filter plugin already passes there).
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from scheduler.cluster.sim.merge import merge_patch
from scheduler.core.explain.dry_post_filter import PlanningPostFilter
from scheduler.core.explain.dry_post_filter import candidates_of
from scheduler.core.explain.evaluation import ChainRun
from scheduler.core.explain.evaluation import run_chain
from scheduler.core.explain.model import Explanation
from scheduler.core.explain.model import Fix
from scheduler.core.explain.model import NodeReport
from scheduler.framework.node_info import counted_nominations
from scheduler.framework.node_table import NodeTable
from scheduler.framework.status import Code
from scheduler.framework.status import Status
from scheduler.objects.errors import InvalidObjectError
from scheduler.objects.pod import Pod
from scheduler.objects.resources import CPU
from scheduler.objects.resources import MEMORY
from scheduler.objects.resources import quantity_in_units
from scheduler.objects.taints import NO_EXECUTE
from scheduler.objects.taints import NO_SCHEDULE
from scheduler.objects.taints import Taint
from scheduler.objects.taints import tolerated
from scheduler.runtime.profile import Profile

RESOURCES_PLUGIN = "NodeResourcesFit"
TAINTS_PLUGIN = "TaintToleration"
AFFINITY_PLUGIN = "NodeAffinity"
# How many single-node request reductions to show (the nearest ones).
MAX_RESOURCE_FIXES = 3
# The highest priority a user's PriorityClass may have (higher values are for the system).
MAX_USER_PRIORITY = 1_000_000_000
_MI = 1024 * 1024
_CONTAINER_LISTS = ("containers", "initContainers")

Verify = Callable[[dict[str, Any]], list[str] | None]


def _blocked_only_by(report: NodeReport, plugin: str) -> bool:
    failing = {v.plugin for v in report.plugins if not v.passed and v.code != "Skip"}
    return not report.feasible and failing == {plugin}


def _format(resource: str, units: int) -> str:
    if resource == CPU:
        return f"{units // 1000}" if units % 1000 == 0 else f"{units}m"
    if resource == MEMORY:
        for suffix, size in (("Gi", 1024 * _MI), ("Mi", _MI), ("Ki", 1024)):
            if units % size == 0:
                return f"{units // size}{suffix}"
    return str(units)


def _container_requests(container: Mapping[str, Any], resource: str) -> int:
    resources = container.get("resources") or {}
    requests = resources.get("requests") or {}
    value = requests.get(resource, (resources.get("limits") or {}).get(resource))
    return quantity_in_units(resource, value) if value is not None else 0


def _scaled_spec(
    raw: Mapping[str, Any], resource: str, target: int, current: int
) -> dict[str, Any]:
    """The pod's container lists with requests of `resource` scaled down to about `target`."""
    spec = raw.get("spec") or {}
    patched: dict[str, Any] = {}
    for key in _CONTAINER_LISTS:
        containers = copy.deepcopy(list(spec.get(key) or []))
        for container in containers:
            value = _container_requests(container, resource)
            if not value:
                continue
            # Init containers run alone: capping each at the target is enough for them.
            new = min(value, target) if key == "initContainers" else value * target // current
            resources = container.setdefault("resources", {})
            resources.setdefault("requests", {})[resource] = _format(resource, new)
            limits = resources.get("limits") or {}
            if resource in limits and quantity_in_units(resource, limits[resource]) < new:
                limits[resource] = _format(resource, new)
        if containers:
            patched[key] = containers
    return patched


def _resource_fixes(
    pod: Pod, explanation: Explanation, profile: Profile, table: NodeTable, verify: Verify
) -> list[Fix]:
    options: list[tuple[float, str, dict[str, int]]] = []
    for report in explanation.nodes:
        if not _blocked_only_by(report, RESOURCES_PLUGIN):
            continue
        row = table.row_of(report.name)
        info = table.node_infos[row] if row is not None else None
        if info is None:
            continue
        # Pods nominated to the node hold their room there, as the scheduler counts it.
        held = counted_nominations(pod, profile.handle.nominated_pods_for_node(info.name))
        if len(info.pods) + len(held) >= info.allowed_pods:
            continue
        allocatable = info.allocatable
        targets: dict[str, int] = {}
        for resource, wanted in pod.requests.items():
            taken = info.requested.get(resource, 0) + sum(p.requests.get(resource, 0) for p in held)
            free = allocatable.get(resource, 0) - taken
            if wanted > free:
                if resource == MEMORY and free >= _MI:
                    free -= free % _MI
                targets[resource] = free
        if targets and all(v > 0 for v in targets.values()):
            cut = max(1 - targets[r] / pod.requests[r] for r in targets)
            options.append((cut, report.name, targets))
    fixes: list[Fix] = []
    for _cut, node, targets in sorted(options):
        if len(fixes) >= MAX_RESOURCE_FIXES:
            break
        spec: dict[str, Any] = {}
        raw = pod.raw
        for resource, target in sorted(targets.items()):
            current = pod.requests[resource]
            spec.update(
                _scaled_spec(
                    {"spec": {**(raw.get("spec") or {}), **spec}}, resource, target, current
                )
            )
        patch = {"spec": spec}
        nodes = verify(patch)
        if not nodes or node not in nodes:
            continue
        limits = " and ".join(
            f"the {r} request is ≤ {_format(r, t)}" for r, t in sorted(targets.items())
        )
        fixes.append(Fix("resources", f"fits {node} if {limits}", tuple(nodes), patch))
    return fixes


def _untolerated(taints: Sequence[Taint], pod: Pod) -> tuple[Taint, ...]:
    return tuple(
        t
        for t in taints
        if t.effect in (NO_SCHEDULE, NO_EXECUTE) and not tolerated(t, pod.tolerations)
    )


def _taint_text(taint: Taint) -> str:
    value = f"={taint.value}" if taint.value else ""
    return f"{taint.key}{value}:{taint.effect}"


def _toleration_fixes(
    pod: Pod, explanation: Explanation, table: NodeTable, verify: Verify
) -> list[Fix]:
    groups: dict[tuple[Taint, ...], int] = {}
    for report in explanation.nodes:
        row = table.row_of(report.name)
        node = table.node_infos[row].node if row is not None else None
        if node is None or not _blocked_only_by(report, TAINTS_PLUGIN):
            continue
        taints = _untolerated(node.taints, pod)
        if taints:
            groups[taints] = groups.get(taints, 0) + 1
    fixes = []
    existing = list((pod.raw.get("spec") or {}).get("tolerations") or [])
    for taints, _count in sorted(groups.items(), key=lambda g: (-g[1], [str(t) for t in g[0]])):
        added = [
            {"key": t.key, "operator": "Equal", "value": t.value, "effect": t.effect}
            if t.value
            else {"key": t.key, "operator": "Exists", "effect": t.effect}
            for t in taints
        ]
        patch = {"spec": {"tolerations": existing + added}}
        nodes = verify(patch)
        if nodes:
            texts = ", ".join(_taint_text(t) for t in taints)
            summary = f"tolerate {texts} to use {len(nodes)} node(s)"
            fixes.append(Fix("toleration", summary, tuple(nodes), patch))
    return fixes


def _affinity_fixes(
    pod: Pod, explanation: Explanation, table: NodeTable, verify: Verify
) -> list[Fix]:
    blocked = [r for r in explanation.nodes if _blocked_only_by(r, AFFINITY_PLUGIN)]
    if not blocked:
        return []
    fixes = []
    for key, value in sorted(pod.node_selector.items()):
        patch: dict[str, Any] = {"spec": {"nodeSelector": {key: None}}}
        nodes = verify(patch)
        if nodes:
            seen = sorted({_label(table, r.name, key) for r in blocked} - {value})
            theirs = f" (nodes have {key}: {', '.join(seen)})" if seen else ""
            summary = f"drop nodeSelector {key}={value} to use {len(nodes)} node(s){theirs}"
            fixes.append(Fix("nodeSelector", summary, tuple(nodes), patch))
    if pod.node_affinity is not None:
        required = {"requiredDuringSchedulingIgnoredDuringExecution": None}
        patch = {"spec": {"affinity": {"nodeAffinity": required}}}
        nodes = verify(patch)
        if nodes:
            summary = f"drop the required node affinity to use {len(nodes)} node(s)"
            fixes.append(Fix("nodeAffinity", summary, tuple(nodes), patch))
    return fixes


def _label(table: NodeTable, node: str, key: str) -> str:
    row = table.row_of(node)
    info = table.node_infos[row].node if row is not None else None
    return info.labels.get(key, "<unset>") if info is not None else "<unset>"


class _Statuses:
    """A chain run's verdicts as the NodeStatusReader PostFilter plugins read."""

    def __init__(self, run: ChainRun) -> None:
        self._codes = {
            name: next(c for c in Code if c.label == v.code) for name, v in run.verdicts.items()
        }
        self._run = run

    def status_of(self, node_name: str) -> Status:
        verdict = self._run.verdicts.get(node_name)
        if verdict is None or verdict.passed:
            return Status()
        return Status(self._codes[node_name], *verdict.reasons, plugin=verdict.plugin)

    def nodes_with_code(self, code: int) -> list[str]:
        return [name for name, c in self._codes.items() if int(c) == code]


_PREEMPT_LOWER = "PreemptLowerPriority"
_PREEMPT_NEVER = "Never"
# How many of the nodes preemption found room on the priority fix's summary names.
MAX_NAMED_NODES = 3


def _priority_patch(value: int) -> dict[str, Any]:
    return {"spec": {"priority": value, "preemptionPolicy": _PREEMPT_LOWER}}


def _preemption_room(
    pod: Pod, value: int, profile: Profile, planner: PlanningPostFilter, table: NodeTable
) -> tuple[str, ...]:
    """The candidate nodes preemption finds for `pod` at priority `value`, verified by
    filtering the raised pod again and asking the planner."""
    raised = Pod.from_dict(merge_patch(pod.raw, _priority_patch(value)))
    run = run_chain(profile, raised, table)
    if not run.pre.status.is_success:
        return ()
    plan = planner.plan(run.state, raised, _Statuses(run))
    return tuple(sorted(c.node for c in candidates_of(plan)))


def _priority_fix(
    pod: Pod, explanation: Explanation, profile: Profile, table: NodeTable
) -> list[Fix]:
    """If preemption found nothing, the lowest priority at which it would."""
    planners = [p for p in profile.post_filter if isinstance(p, PlanningPostFilter)]
    if not planners or any(r.candidates for r in explanation.post_filter):
        return []
    never = pod.preemption_policy == _PREEMPT_NEVER
    helpable = [n.name for n in explanation.nodes if n.verdict.code == Code.UNSCHEDULABLE.label]
    # Only outranking a pod makes it a possible victim, so these are the only values worth
    # trying; a pod whose policy is Never may need the policy changed and no more.
    wanted = {
        p.priority + 1
        for name in helpable
        if (row := table.row_of(name)) is not None
        for p in table.node_infos[row].pods.values()
        if p.priority >= pod.priority
    } | ({pod.priority} if never else set())
    values = sorted(v for v in wanted if v <= MAX_USER_PRIORITY)
    # A higher priority may evict every pod a lower one may, and more, so where preemption
    # finds room at one value it does at every higher one (unless the pod needs, by affinity,
    # a pod it would then outrank): bisect for the lowest, running the planner a logarithmic
    # number of times. The value returned is one the planner was asked about.
    low, high = 0, len(values)
    found: tuple[str, ...] = ()
    while low < high:
        middle = (low + high) // 2
        nodes = _preemption_room(pod, values[middle], profile, planners[0], table)
        if nodes:
            high, found = middle, nodes
        else:
            low = middle + 1
    if not found:
        return []
    value = values[high]
    named = ", ".join(found[:MAX_NAMED_NODES])
    if len(found) > MAX_NAMED_NODES:
        named += f" and {len(found) - MAX_NAMED_NODES} more"
    # The planner samples candidate nodes, so they are where it found room, not all there is.
    policy = f" and preemptionPolicy {_PREEMPT_LOWER}" if never else ""
    now = f" (its preemptionPolicy is {_PREEMPT_NEVER} now)" if never else ""
    summary = (
        f"priority {value} lets preemption find room on {named} (of the nodes it examined): "
        f"a PriorityClass of value ≥ {value}{policy} for the pod{now}"
    )
    return [Fix("priority", summary, found, _priority_patch(value))]


def nearest_fixes(
    profile: Profile, pod: Pod, explanation: Explanation, table: NodeTable
) -> list[Fix]:
    """Verified fixes, for a pod no node accepts (none for a pod that fits)."""
    if any(n.feasible for n in explanation.nodes) or not explanation.nodes:
        return []

    def verify(patch: dict[str, Any]) -> list[str] | None:
        try:
            changed = Pod.from_dict(merge_patch(pod.raw, patch))
        except InvalidObjectError:
            return None
        return run_chain(profile, changed, table).feasible

    return [
        *_resource_fixes(pod, explanation, profile, table, verify),
        *_toleration_fixes(pod, explanation, table, verify),
        *_affinity_fixes(pod, explanation, table, verify),
        *_priority_fix(pod, explanation, profile, table),
    ]
