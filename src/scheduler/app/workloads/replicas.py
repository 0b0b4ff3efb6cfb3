"""Deployments, ReplicaSets and ReplicationControllers: N interchangeable pods with generated names.

A Deployment creates one ReplicaSet named after it and the hash of its pod template, whose
pods carry that hash in the pod-template-hash label; the ReplicaSet (or ReplicationController)
creates the pods, each named after it with a random five-character suffix.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Sequence
from typing import Any

from scheduler.app.workloads.naming import GeneratedNames
from scheduler.app.workloads.naming import template_hash
from scheduler.app.workloads.owners import Owner
from scheduler.app.workloads.owners import stamp_pod
from scheduler.app.workloads.owners import with_uid

POD_TEMPLATE_HASH = "pod-template-hash"
REVISION_ANNOTATION = "deployment.kubernetes.io/revision"
DESIRED_REPLICAS_ANNOTATION = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS_ANNOTATION = "deployment.kubernetes.io/max-replicas"


def deployment_replica_set(deployment: Owner, rng: random.Random) -> dict[str, Any]:
    """The first ReplicaSet of `deployment`, as its controller creates it."""
    template = deployment.template()
    hashed = template_hash(template)
    replicas = deployment.count("replicas", 1)
    labels = {**((template.get("metadata") or {}).get("labels") or {}), POD_TEMPLATE_HASH: hashed}
    rs_template = copy.deepcopy(dict(template))
    rs_template.setdefault("metadata", {})["labels"] = labels
    selector = copy.deepcopy(dict(deployment.spec.get("selector") or {}))
    selector["matchLabels"] = {**(selector.get("matchLabels") or {}), POD_TEMPLATE_HASH: hashed}
    max_surge = replicas + _max_surge(deployment, replicas)
    return with_uid(
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {
                "name": f"{deployment.name}-{hashed}",
                "namespace": deployment.namespace,
                "labels": labels,
                "annotations": {
                    REVISION_ANNOTATION: "1",
                    DESIRED_REPLICAS_ANNOTATION: str(replicas),
                    MAX_REPLICAS_ANNOTATION: str(max_surge),
                },
                "ownerReferences": [deployment.reference()],
            },
            "spec": {"replicas": replicas, "selector": selector, "template": rs_template},
        },
        rng,
    ).raw


def _max_surge(deployment: Owner, replicas: int) -> int:
    """maxSurge of a RollingUpdate strategy as a pod count (25% rounded up by default)."""
    strategy = deployment.spec.get("strategy") or {}
    if strategy.get("type") == "Recreate":
        return 0
    surge = (strategy.get("rollingUpdate") or {}).get("maxSurge", "25%")
    if isinstance(surge, int) and not isinstance(surge, bool):
        return surge
    text = str(surge)
    if text.endswith("%") and text[:-1].isdigit():
        return -(-replicas * int(text[:-1]) // 100)
    raise deployment.error(
        "spec.strategy.rollingUpdate.maxSurge", f"must be an integer or a percentage: {surge!r}"
    )


def replica_pods(
    owner: Owner, mine: Sequence[dict[str, Any]], names: GeneratedNames
) -> list[dict[str, Any]]:
    """The pods a ReplicaSet or ReplicationController adds to `mine` to reach spec.replicas."""
    template = owner.template()
    missing = owner.count("replicas", 1) - len(mine)
    return [stamp_pod(owner, template, names.generate(f"{owner.name}-")) for _ in range(missing)]
