"""DaemonSets: one pod for every node the pod should run on.

A node is eligible when the pod template's nodeSelector and required node affinity match it
and every NoSchedule and NoExecute taint on it is tolerated (counting the tolerations the
controller adds). Each pod is pinned to its node the way the controller does it: the required
node affinity becomes a single term matching the field metadata.name, and the scheduler does
the rest.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from scheduler.app.workloads.naming import GeneratedNames
from scheduler.app.workloads.naming import template_hash
from scheduler.app.workloads.owners import Owner
from scheduler.app.workloads.owners import stamp_pod
from scheduler.objects.node import Node
from scheduler.objects.node_selector import parse_node_selector
from scheduler.objects.taints import NO_EXECUTE
from scheduler.objects.taints import NO_SCHEDULE
from scheduler.objects.taints import TAINT_NODE_UNSCHEDULABLE
from scheduler.objects.taints import parse_toleration
from scheduler.objects.taints import tolerated

REVISION_LABEL = "controller-revision-hash"
TEMPLATE_GENERATION_LABEL = "pod-template-generation"


def _toleration(key: str, effect: str) -> dict[str, str]:
    return {"key": key, "operator": "Exists", "effect": effect}


# Added to every daemon pod: it stays on a node that is not ready, unreachable, under pressure
# or cordoned, since a per-node daemon is often what fixes such a node.
DAEMON_TOLERATIONS = (
    _toleration("node.kubernetes.io/not-ready", NO_EXECUTE),
    _toleration("node.kubernetes.io/unreachable", NO_EXECUTE),
    _toleration("node.kubernetes.io/disk-pressure", NO_SCHEDULE),
    _toleration("node.kubernetes.io/memory-pressure", NO_SCHEDULE),
    _toleration("node.kubernetes.io/pid-pressure", NO_SCHEDULE),
    _toleration(TAINT_NODE_UNSCHEDULABLE, NO_SCHEDULE),
)
# And to one on the host network, which needs no pod network to start.
HOST_NETWORK_TOLERATION = _toleration("node.kubernetes.io/network-unavailable", NO_SCHEDULE)


def daemon_pods(
    owner: Owner,
    nodes: Sequence[Mapping[str, Any]],
    mine: Sequence[dict[str, Any]],
    names: GeneratedNames,
) -> list[dict[str, Any]]:
    template = copy.deepcopy(dict(owner.template()))
    spec = template["spec"]
    spec["tolerations"] = _with_daemon_tolerations(spec)
    served = {_pinned_node(pod) for pod in mine}
    labels = {REVISION_LABEL: template_hash(owner.template()), TEMPLATE_GENERATION_LABEL: "1"}
    pods = []
    for raw in nodes:
        node = Node.from_dict(raw)
        if node.name in served or not _should_run(owner, spec, node):
            continue
        pod = stamp_pod(owner, template, names.generate(f"{owner.name}-"), labels=labels)
        _pin(pod["spec"], node.name)
        pods.append(pod)
    return pods


def _with_daemon_tolerations(spec: Mapping[str, Any]) -> list[dict[str, Any]]:
    tolerations = [dict(t) for t in spec.get("tolerations") or ()]
    extra = list(DAEMON_TOLERATIONS)
    if spec.get("hostNetwork"):
        extra.append(HOST_NETWORK_TOLERATION)
    for toleration in extra:
        if not any(
            t.get("key") == toleration["key"] and t.get("effect") == toleration["effect"]
            for t in tolerations
        ):
            tolerations.append(dict(toleration))
    return tolerations


def _should_run(owner: Owner, spec: Mapping[str, Any], node: Node) -> bool:
    if spec.get("nodeName") and spec["nodeName"] != node.name:
        return False
    selector = spec.get("nodeSelector") or {}
    if any(node.labels.get(k) != v for k, v in selector.items()):
        return False
    affinity = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    )
    try:
        required = parse_node_selector(affinity)
        tolerations = [parse_toleration(t) for t in spec.get("tolerations") or ()]
    except ValueError as exc:  # a bad selector or toleration
        raise owner.error("spec.template.spec", str(exc)) from exc
    if required is not None and not required.matches(node.labels, node.name):
        return False
    return all(
        tolerated(taint, tolerations)
        for taint in node.taints
        if taint.effect in (NO_SCHEDULE, NO_EXECUTE)
    )


def _pin(spec: dict[str, Any], node_name: str) -> None:
    """Replace the required node affinity with one term naming the node by metadata.name."""
    affinity = spec.setdefault("affinity", {})
    node_affinity = affinity.setdefault("nodeAffinity", {})
    node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {
        "nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}
        ]
    }


def _pinned_node(pod: Mapping[str, Any]) -> str:
    spec = pod.get("spec") or {}
    if spec.get("nodeName"):
        return str(spec["nodeName"])
    required = ((spec.get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution"
    ) or {}
    for term in required.get("nodeSelectorTerms") or ():
        for field in term.get("matchFields") or ():
            if field.get("key") == "metadata.name" and field.get("values"):
                return str(field["values"][0])
    return ""
