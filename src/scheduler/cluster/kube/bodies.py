"""Request bodies the adapter sends: typed objects, Binding, DeleteOptions, status patches and
Events. Pure functions over plain dicts, so their shapes are tested without a server."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC
from datetime import datetime
from datetime import timedelta
from typing import Any

from scheduler.cluster.kube.resources import DEFAULT_NAMESPACE
from scheduler.cluster.kube.resources import ApiResource
from scheduler.objects.event_names import event_name

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def typed(resource: ApiResource, obj: Mapping[str, Any]) -> dict[str, Any]:
    """`obj` (shallow copy) with apiVersion and kind filled in when missing, as the server
    requires them in a write's body."""
    body = dict(obj)
    body.setdefault("apiVersion", resource.api_version)
    body.setdefault("kind", resource.kind)
    return body


def namespace_of(resource: ApiResource, obj: Mapping[str, Any]) -> str:
    """Where a write of `obj` goes: its own namespace, `default` if it names none."""
    if not resource.namespaced:
        return ""
    return str((obj.get("metadata") or {}).get("namespace") or DEFAULT_NAMESPACE)


def name_of(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def binding(namespace: str, name: str, uid: str, node_name: str) -> dict[str, Any]:
    """A v1 Binding of one pod to a node. With the pod's uid in the metadata the server binds
    only that pod: one deleted and recreated under the same name meanwhile is refused."""
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if uid:
        metadata["uid"] = uid
    return {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": metadata,
        "target": {"apiVersion": "v1", "kind": "Node", "name": node_name},
    }


def delete_options(uid: str = "", grace_period_seconds: int | None = None) -> dict[str, Any]:
    """DeleteOptions that delete only the object with `uid` (if given)."""
    options: dict[str, Any] = {"apiVersion": "v1", "kind": "DeleteOptions"}
    if uid:
        options["preconditions"] = {"uid": uid}
    if grace_period_seconds is not None:
        options["gracePeriodSeconds"] = grace_period_seconds
    return options


def status_patch(patch: Mapping[str, Any]) -> dict[str, Any]:
    """A patch for the `status` subresource from either shape the port accepts: the status
    fields themselves, or a whole ``{"status": {...}}`` body."""
    inner = patch.get("status")
    stanza = inner if isinstance(inner, Mapping) and len(patch) == 1 else patch
    return {"status": dict(stanza)}


def event_body(event: Mapping[str, Any], now: datetime) -> dict[str, Any]:
    """An events.k8s.io/v1 Event ready to create. It lives in the namespace of the object it
    regards (`default` for cluster-scoped ones) and, unless named, is named like client-go names
    events: the regarded object's name, a dot, and the time in nanoseconds as hex. (A
    generateName of "<name>." would not do: the server rejects a prefix ending in a dot.)"""
    body = dict(event)
    body.setdefault("apiVersion", "events.k8s.io/v1")
    body.setdefault("kind", "Event")
    meta = dict(body.get("metadata") or {})
    regarding = body.get("regarding") or {}
    meta["namespace"] = meta.get("namespace") or regarding.get("namespace") or DEFAULT_NAMESPACE
    if not meta.get("name") and not meta.get("generateName"):
        meta["name"] = event_name(str(regarding.get("name") or "event"), _unix_nanos(now))
    body["metadata"] = meta
    return body


def _unix_nanos(moment: datetime) -> int:
    return (moment - _EPOCH) // timedelta(microseconds=1) * 1000
