"""StatefulSets: pods with stable ordinal names, hostnames and one claim per volumeClaimTemplate.

Pod `<set>-<ordinal>` gets claim `<template>-<set>-<ordinal>` for each volumeClaimTemplate, in
place of any template volume of the same name. The simulated cluster has no kubelet to report
a pod Ready, so an OrderedReady set creates all its pods at once, in ordinal order, as a
Parallel one does.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from collections.abc import Sequence
from collections.abc import Set
from typing import Any

from scheduler.app.workloads.naming import template_hash
from scheduler.app.workloads.owners import Owner
from scheduler.app.workloads.owners import object_key
from scheduler.app.workloads.owners import stamp_pod

POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
REVISION_LABEL = "controller-revision-hash"


def statefulset_objects(owner: Owner, taken: Set[tuple[str, str, str]]) -> list[dict[str, Any]]:
    """The claims and pods of `owner` whose (kind, namespace, name) is not `taken`, each pod
    after its claims."""
    template = owner.template()
    start = _ordinal_start(owner)
    revision = f"{owner.name}-{template_hash(template)}"
    claims = _claim_templates(owner)
    created: list[dict[str, Any]] = []
    for ordinal in range(start, start + owner.count("replicas", 1)):
        name = f"{owner.name}-{ordinal}"
        for claim in (_claim(owner, t, ordinal) for t in claims):
            if object_key(claim) not in taken:
                created.append(claim)
        if ("Pod", owner.namespace, name) in taken:
            continue
        pod = stamp_pod(
            owner,
            template,
            name,
            labels={POD_NAME_LABEL: name, POD_INDEX_LABEL: str(ordinal), REVISION_LABEL: revision},
        )
        spec = pod["spec"]
        spec["hostname"] = name
        if owner.spec.get("serviceName"):
            spec["subdomain"] = str(owner.spec["serviceName"])
        _mount_claims(spec, claims, owner, ordinal)
        created.append(pod)
    return created


def _ordinal_start(owner: Owner) -> int:
    ordinals = owner.spec.get("ordinals") or {}
    start = ordinals.get("start", 0) if isinstance(ordinals, Mapping) else None
    if isinstance(start, bool) or not isinstance(start, int) or start < 0:
        raise owner.error("spec.ordinals.start", f"must be a non-negative integer, got {start!r}")
    return start


def _claim_templates(owner: Owner) -> list[Mapping[str, Any]]:
    templates = owner.spec.get("volumeClaimTemplates") or []
    for index, template in enumerate(templates):
        name = (template.get("metadata") or {}).get("name") if isinstance(template, Mapping) else ""
        if not name:
            raise owner.error(f"spec.volumeClaimTemplates[{index}].metadata.name", "Required value")
    return list(templates)


def _claim_name(template: Mapping[str, Any], owner: Owner, ordinal: int) -> str:
    return f"{template['metadata']['name']}-{owner.name}-{ordinal}"


def _claim(owner: Owner, template: Mapping[str, Any], ordinal: int) -> dict[str, Any]:
    """The claim of one pod from one template: the set's selector labels over the template's,
    and owned by the set only when the retention policy deletes claims with it."""
    meta = template.get("metadata") or {}
    selector_labels = (owner.spec.get("selector") or {}).get("matchLabels") or {}
    metadata: dict[str, Any] = {
        "name": _claim_name(template, owner, ordinal),
        "namespace": owner.namespace,
        "labels": {**(meta.get("labels") or {}), **selector_labels},
    }
    if meta.get("annotations"):
        metadata["annotations"] = dict(meta["annotations"])
    policy = owner.spec.get("persistentVolumeClaimRetentionPolicy") or {}
    if policy.get("whenDeleted") == "Delete":
        metadata["ownerReferences"] = [owner.reference()]
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": metadata,
        "spec": copy.deepcopy(dict(template.get("spec") or {})),
    }


def _mount_claims(
    spec: dict[str, Any], claims: Sequence[Mapping[str, Any]], owner: Owner, ordinal: int
) -> None:
    names = {str(t["metadata"]["name"]) for t in claims}
    volumes = [v for v in spec.get("volumes") or () if v.get("name") not in names]
    volumes.extend(
        {
            "name": str(t["metadata"]["name"]),
            "persistentVolumeClaim": {"claimName": _claim_name(t, owner, ordinal)},
        }
        for t in claims
    )
    if volumes:
        spec["volumes"] = volumes
