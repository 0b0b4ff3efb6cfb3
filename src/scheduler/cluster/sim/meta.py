"""The fields the API server owns: names, uid, timestamps, generation, defaults per kind."""

from __future__ import annotations

import functools
import random
import string
import uuid
from collections.abc import Mapping
from datetime import datetime
from datetime import tzinfo
from typing import Any

from scheduler.cluster.resource_kinds import ResourceKind
from scheduler.framework.errors import APIError
from scheduler.framework.errors import ConflictError
from scheduler.objects.raw import DEFAULT_NAMESPACE

# What the API server itself fills in that the scheduler relies on.
DEFAULT_SCHEDULER_NAME = "default-scheduler"
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"

# metadata fields no update or patch can change.
SERVER_OWNED_METADATA = ("name", "namespace", "uid", "creationTimestamp", "deletionTimestamp")

_SUFFIX_ALPHABET = string.ascii_lowercase + string.digits


def timestamp(moment: datetime) -> str:
    """RFC 3339 in UTC at second precision, as metav1.Time serialises."""
    return _second_text(moment.replace(microsecond=0), moment.tzinfo)


@functools.lru_cache(maxsize=4)
def _second_text(second: datetime, zone: tzinfo | None) -> str:
    # Every write in the same second stamps the same text; strftime is the costly part. The
    # zone is part of the key: the same instant in another zone prints other fields.
    del zone
    return second.strftime("%Y-%m-%dT%H:%M:%SZ")


def new_uid(rng: random.Random) -> str:
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def prepare_create(
    kind: ResourceKind, obj: dict[str, Any], now: datetime, rng: random.Random
) -> dict[str, Any]:
    """Fill system metadata and defaults into `obj` (a private copy the store will own).

    A uid, creationTimestamp or deletionTimestamp already present is kept, unlike the API server,
    so scenarios and tests can pin them (and describe a pod that is terminating); everything else
    is assigned as the server would. After creation these fields cannot change.
    """
    obj["apiVersion"] = kind.api_version
    obj["kind"] = kind.kind
    meta = obj.setdefault("metadata", {})
    if not meta.get("name"):
        prefix = meta.get("generateName")
        if not prefix:
            raise APIError(422, f"{kind.kind}: metadata.name or metadata.generateName is required")
        meta["name"] = prefix + "".join(rng.choice(_SUFFIX_ALPHABET) for _ in range(5))
    if kind.namespaced:
        meta["namespace"] = meta.get("namespace") or DEFAULT_NAMESPACE
    else:
        meta.pop("namespace", None)
    meta.setdefault("uid", new_uid(rng))
    meta.setdefault("creationTimestamp", timestamp(now))
    meta["generation"] = 1
    meta.pop("resourceVersion", None)
    _apply_defaults(kind, obj)
    if kind.resource == "pods":
        _gated_condition(obj, timestamp(now))
    return obj


def _gated_condition(pod: dict[str, Any], now: str) -> None:
    """As the API server does on creation: a pod with scheduling gates and no PodScheduled
    condition gets PodScheduled=False, SchedulingGated."""
    if not (pod.get("spec") or {}).get("schedulingGates"):
        return
    conditions = pod["status"].setdefault("conditions", [])
    if any(isinstance(c, dict) and c.get("type") == "PodScheduled" for c in conditions):
        return
    conditions.append(
        {
            "type": "PodScheduled",
            "status": "False",
            "reason": "SchedulingGated",
            "message": "Scheduling is blocked due to non-empty scheduling gates",
            "lastTransitionTime": now,
        }
    )


def prepare_update(
    kind: ResourceKind, current: Mapping[str, Any], obj: dict[str, Any]
) -> dict[str, Any]:
    """Carry the server-owned fields of `current` over to the replacement `obj`."""
    obj["apiVersion"] = kind.api_version
    obj["kind"] = kind.kind
    meta = obj.setdefault("metadata", {})
    old_meta = current["metadata"]
    uid = meta.get("uid")
    if uid and uid != old_meta.get("uid"):
        raise uid_precondition_failed(uid, old_meta.get("uid"))
    for field in SERVER_OWNED_METADATA:
        if field in old_meta:
            meta[field] = old_meta[field]
        else:
            meta.pop(field, None)
    meta["generation"] = next_generation(current, obj)
    _apply_defaults(kind, obj)
    return obj


def uid_precondition_failed(expected: object, actual: object) -> ConflictError:
    return ConflictError(
        f"Precondition failed: UID in precondition: {expected}, UID in object meta: {actual}"
    )


def next_generation(current: Mapping[str, Any], new: Mapping[str, Any]) -> int:
    """Generation counts changes to the desired state (`spec`), not to status or metadata."""
    generation = int(current.get("metadata", {}).get("generation") or 1)
    return generation + 1 if current.get("spec") != new.get("spec") else generation


def same_content(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether a write would change nothing; the API server skips such writes entirely."""
    meta_a = {k: v for k, v in a.get("metadata", {}).items() if k != "resourceVersion"}
    meta_b = {k: v for k, v in b.get("metadata", {}).items() if k != "resourceVersion"}
    if meta_a != meta_b:
        return False
    return {k: v for k, v in a.items() if k != "metadata"} == {
        k: v for k, v in b.items() if k != "metadata"
    }


def _apply_defaults(kind: ResourceKind, obj: dict[str, Any]) -> None:
    if kind.resource == "pods":
        spec = obj.setdefault("spec", {})
        spec.setdefault("schedulerName", DEFAULT_SCHEDULER_NAME)
        status = obj.setdefault("status", {})
        status.setdefault("phase", "Pending")
    elif kind.resource == "namespaces":
        meta = obj["metadata"]
        meta["labels"] = {**(meta.get("labels") or {}), NAMESPACE_NAME_LABEL: meta["name"]}
        obj.setdefault("status", {}).setdefault("phase", "Active")
    elif kind.resource == "storageclasses":
        # The volume plugins read the binding mode; upstream's fail a class without one, which
        # only an API server that skipped its defaults could store.
        obj.setdefault("volumeBindingMode", "Immediate")
        obj.setdefault("reclaimPolicy", "Delete")
