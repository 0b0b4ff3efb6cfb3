"""SimCluster: an in-memory API server implementing the cluster port.

It holds state and enforces the rules the API server enforces for the objects a scheduler
touches: one global, increasing resourceVersion; uid, creationTimestamp and generation; 409 on
creating a taken name, on a stale update and on binding a bound pod; 404 on a gone pod; watch
streams in version order from a bounded history, with 410 Gone past it; Events. Deliberate
simplifications: no admission, no status subresource split (update and patch_object may change
status, which is how scenarios move nodes and pods along), namespaces are not required to exist,
and deletes are immediate (there is no kubelet to finish a graceful deletion) unless the
object has finalizers: it is then marked with a deletionTimestamp and goes when the last one
is removed.

Stored objects are shared, never mutated: `list`, `watch`, `objects` and `events` hand them
out as they are (read-only by contract), while `get`, `create` and `update` return copies.
"""

from __future__ import annotations

import builtins
import random
from collections.abc import AsyncIterator
from collections.abc import Iterable
from collections.abc import Mapping
from contextlib import aclosing
from typing import Any

from scheduler.cluster.port import ObjectList
from scheduler.cluster.port import WatchEvent
from scheduler.cluster.port import WatchEventType
from scheduler.cluster.resource_kinds import BUILTIN_KINDS
from scheduler.cluster.resource_kinds import ResourceKind
from scheduler.cluster.sim.event_rules import check_event
from scheduler.cluster.sim.faults import FaultInjector
from scheduler.cluster.sim.field_selector import parse_field_selector
from scheduler.cluster.sim.kinds import KindRegistry
from scheduler.cluster.sim.merge import clone_object
from scheduler.cluster.sim.merge import merge_patch
from scheduler.cluster.sim.meta import SERVER_OWNED_METADATA
from scheduler.cluster.sim.meta import next_generation
from scheduler.cluster.sim.meta import prepare_create
from scheduler.cluster.sim.meta import prepare_update
from scheduler.cluster.sim.meta import same_content
from scheduler.cluster.sim.meta import timestamp
from scheduler.cluster.sim.meta import uid_precondition_failed
from scheduler.cluster.sim.pod_rules import bound_pod
from scheduler.cluster.sim.pod_rules import existing_pod
from scheduler.cluster.sim.pod_rules import status_patched
from scheduler.cluster.sim.store import Change
from scheduler.cluster.sim.store import ResourceStore
from scheduler.framework.clock import Clock
from scheduler.framework.errors import APIError
from scheduler.framework.errors import ConflictError
from scheduler.framework.errors import NotFoundError
from scheduler.objects.pod import Pod
from scheduler.objects.raw import DEFAULT_NAMESPACE

# The namespaces kube-apiserver's system-namespaces controller keeps in existence.
SYSTEM_NAMESPACES = (DEFAULT_NAMESPACE, "kube-node-lease", "kube-public", "kube-system")
DEFAULT_HISTORY_LIMIT = 100_000


class SimCluster:
    """Implements `scheduler.cluster.port.ClusterClient` in memory."""

    def __init__(
        self,
        clock: Clock,
        *,
        rng: random.Random | None = None,
        history_limit: int = DEFAULT_HISTORY_LIMIT,
        kinds: Iterable[ResourceKind] = BUILTIN_KINDS,
    ) -> None:
        self._clock = clock
        # uids and generated names come from here, so a seeded run is reproducible.
        self._rng = rng if rng is not None else random.Random(0)
        self._history_limit = history_limit
        self._kinds = KindRegistry(kinds)
        self._stores: dict[str, ResourceStore] = {}
        self._revision = 0
        # Stored pods with spec.nodeName, kept as they change: progress reports read it often.
        self._bound_pods = 0
        self._faults = FaultInjector()
        self._closed = False
        for namespace in SYSTEM_NAMESPACES:
            self._create("namespaces", {"metadata": {"name": namespace}})

    # Reads -----------------------------------------------------------------------------------

    async def list(
        self,
        resource: str,
        *,
        namespace: str | None = None,
        field_selector: str | None = None,
    ) -> ObjectList:
        self._faults.check("list", resource)
        store = self._store(resource)
        selector = parse_field_selector(field_selector)
        items = [
            obj
            for (ns, _), obj in sorted(store.objects.items())
            if (namespace is None or ns == namespace) and (selector.empty or selector.matches(obj))
        ]
        return ObjectList(items, str(self._revision))

    async def watch(
        self,
        resource: str,
        *,
        resource_version: str,
        field_selector: str | None = None,
        allow_bookmarks: bool = True,
    ) -> AsyncIterator[WatchEvent]:
        self._faults.check("watch", resource)
        store = self._store(resource)
        selector = parse_field_selector(field_selector)
        if self._closed:
            return
        since = _parse_version(resource_version)
        if since == 0:
            # "Any version": the API server starts such a watch with the current state.
            since = self._revision
            for event in store.snapshot_events(selector):
                yield event
        async with aclosing(store.stream(since, selector, allow_bookmarks)) as events:
            async for event in events:
                yield event

    async def get(self, resource: str, namespace: str, name: str) -> dict[str, Any]:
        self._faults.check("get", resource)
        return clone_object(self._existing(self._store(resource), namespace, name))

    # Writes ----------------------------------------------------------------------------------

    async def create(self, resource: str, obj: Mapping[str, Any]) -> dict[str, Any]:
        self._faults.check("create", resource)
        return clone_object(self._create(resource, obj))

    async def update(self, resource: str, obj: Mapping[str, Any]) -> dict[str, Any]:
        self._faults.check("update", resource)
        store = self._store(resource)
        meta = obj.get("metadata") or {}
        current = self._existing(store, str(meta.get("namespace") or ""), str(meta.get("name")))
        _check_version(store.kind, current, meta)
        new = prepare_update(store.kind, current, clone_object(obj))
        return clone_object(self._write_or_finish_deletion(store, new, current))

    async def delete(self, resource: str, namespace: str, name: str) -> None:
        self._faults.check("delete", resource)
        store = self._store(resource)
        self._delete(store, self._existing(store, namespace, name))

    async def bind(self, pod: Pod, node_name: str) -> None:
        self._faults.check("bind", "pods")
        store = self._store("pods")
        current = existing_pod(
            store.objects.get((pod.namespace, pod.name)), pod.namespace, pod.name, pod.uid
        )
        self._write(
            store, bound_pod(current, pod, node_name, timestamp(self._clock.wall())), current
        )

    async def delete_pod(self, namespace: str, name: str, uid: str = "") -> None:
        self._faults.check("delete", "pods")
        store = self._store("pods")
        current = self._existing(store, namespace, name)
        current_uid = current["metadata"].get("uid")
        if uid and uid != current_uid:
            raise uid_precondition_failed(uid, current_uid)
        self._delete(store, current)

    async def patch_pod_status(self, namespace: str, name: str, patch: Mapping[str, Any]) -> None:
        self._faults.check("patch", "pods")
        store = self._store("pods")
        current = self._existing(store, namespace, name)
        self._write(store, status_patched(current, patch), current)

    async def patch_object(
        self,
        resource: str,
        namespace: str,
        name: str,
        patch: Mapping[str, Any],
        subresource: str = "",
    ) -> None:
        # One object holds spec and status here, so a status patch merges like any other.
        del subresource
        self._faults.check("patch", resource)
        store = self._store(resource)
        current = self._existing(store, namespace, name)
        _check_version(store.kind, current, patch.get("metadata") or {})
        new = merge_patch(current, patch)
        meta = {
            k: v for k, v in (new.get("metadata") or {}).items() if k not in SERVER_OWNED_METADATA
        }
        meta.update(
            {k: current["metadata"][k] for k in SERVER_OWNED_METADATA if k in current["metadata"]}
        )
        meta["generation"] = next_generation(current, new)
        new["metadata"] = meta
        self._write_or_finish_deletion(store, new, current)

    async def create_event(self, event: Mapping[str, Any]) -> None:
        self._faults.check("create", "events")
        check_event(event)
        body = clone_object(event)
        meta = body.setdefault("metadata", {})
        regarding = body.get("regarding") or {}
        meta.setdefault("namespace", regarding.get("namespace") or DEFAULT_NAMESPACE)
        if not meta.get("name") and not meta.get("generateName"):
            meta["generateName"] = f"{regarding.get('name') or 'event'}."
        self._create("events", body, copied=True)

    async def close(self) -> None:
        self._closed = True
        self.end_watches()

    # Scenario and test helpers ---------------------------------------------------------------

    @property
    def revision(self) -> int:
        """The latest resourceVersion issued, across all resources."""
        return self._revision

    @property
    def bound_pods(self) -> int:
        """How many stored pods have spec.nodeName set."""
        return self._bound_pods

    def latest_revision(self, resource: str) -> int:
        """The resourceVersion of the newest change to `resource`; a watcher that has seen it
        is caught up."""
        return self._store(resource).latest_revision

    def register_kind(self, kind: ResourceKind) -> None:
        """Serve one more resource (e.g. a custom resource a plugin reads)."""
        self._kinds.register(kind)

    def load(self, objects: Iterable[Mapping[str, Any]]) -> builtins.list[dict[str, Any]]:
        """Create manifests (as parsed from YAML) in order, choosing the resource by apiVersion
        and kind. Returns the stored objects (read-only)."""
        return [self._create(self._kinds.for_object(obj).resource, obj) for obj in objects]

    def objects(self, resource: str) -> builtins.list[dict[str, Any]]:
        """Every stored object of `resource`, by namespace and name (read-only)."""
        return [obj for _, obj in sorted(self._store(resource).objects.items())]

    def events(self, regarding_key: str | None = None) -> builtins.list[dict[str, Any]]:
        """Recorded Events in the order they were created, optionally only those regarding the
        object with key "namespace/name" (or "name" if cluster-scoped)."""
        events = sorted(
            self._store("events").objects.values(),
            key=lambda e: int(e["metadata"]["resourceVersion"]),
        )
        if regarding_key is None:
            return events
        return [e for e in events if _regarding_key(e) == regarding_key]

    def fail_next(self, verb: str, resource: str, error: APIError) -> None:
        """Make the next `verb` ("list", "watch", "get", "create", "update", "delete", "patch"
        or "bind") on `resource` raise `error`. `bind`, `delete_pod` and `patch_pod_status`
        count as bind/delete/patch on "pods", `create_event` as create on "events"."""
        self._faults.fail_next(verb, resource, error)

    def end_watches(self, resource: str | None = None) -> None:
        """End open watch streams, as an API server does when it closes connections."""
        for name, store in self._stores.items():
            if resource is None or name == resource:
                store.end_streams()

    # Internals -------------------------------------------------------------------------------

    def _store(self, resource: str) -> ResourceStore:
        store = self._stores.get(resource)
        if store is None:
            store = ResourceStore(self._kinds.for_resource(resource), self._history_limit)
            self._stores[resource] = store
        return store

    def _existing(self, store: ResourceStore, namespace: str, name: str) -> dict[str, Any]:
        if not store.kind.namespaced:
            namespace = ""
        elif not namespace:
            namespace = DEFAULT_NAMESPACE
        current = store.objects.get((namespace, name))
        if current is None:
            raise NotFoundError(f'{store.kind.qualified_name} "{name}" not found')
        return current

    def _create(
        self, resource: str, obj: Mapping[str, Any], *, copied: bool = False
    ) -> dict[str, Any]:
        """Store a new object; `copied` says `obj` is already a private copy the store may own."""
        store = self._store(resource)
        own = dict(obj) if copied else clone_object(obj)
        new = prepare_create(store.kind, own, self._clock.wall(), self._rng)
        meta = new["metadata"]
        if (meta.get("namespace", ""), meta["name"]) in store.objects:
            raise ConflictError(f'{store.kind.qualified_name} "{meta["name"]}" already exists')
        return self._commit(store, "ADDED", new, None)

    def _write(
        self, store: ResourceStore, new: dict[str, Any], current: dict[str, Any]
    ) -> dict[str, Any]:
        """Store a modification, unless it changes nothing (then no version, no event)."""
        if same_content(new, current):
            return current
        return self._commit(store, "MODIFIED", new, current)

    def _write_or_finish_deletion(
        self, store: ResourceStore, new: dict[str, Any], current: dict[str, Any]
    ) -> dict[str, Any]:
        """`_write`, then, if that removed the last finalizer of an object being deleted,
        its removal."""
        written = self._write(store, new, current)
        meta = written["metadata"]
        if meta.get("deletionTimestamp") and not meta.get("finalizers"):
            self._delete(store, written)
        return written

    def _delete(self, store: ResourceStore, current: dict[str, Any]) -> None:
        """Remove the object, or, while it has finalizers, only mark it (deletionTimestamp)
        as the API server does; removing its last finalizer then removes it."""
        meta = current["metadata"]
        if not meta.get("finalizers"):
            self._commit(store, "DELETED", current, current)
            return
        if not meta.get("deletionTimestamp"):
            moment = timestamp(self._clock.wall())
            marked = {**current, "metadata": {**meta, "deletionTimestamp": moment}}
            self._commit(store, "MODIFIED", marked, current)

    def _commit(
        self,
        store: ResourceStore,
        kind: WatchEventType,
        obj: dict[str, Any],
        previous: dict[str, Any] | None,
    ) -> dict[str, Any]:
        self._revision += 1
        stamped = {**obj, "metadata": {**obj["metadata"], "resourceVersion": str(self._revision)}}
        if store.kind.resource == "pods":
            after = kind != "DELETED" and _has_node(stamped)
            self._bound_pods += after - (previous is not None and _has_node(previous))
        store.record(Change(self._revision, kind, stamped, previous))
        return stamped


def _has_node(pod: Mapping[str, Any]) -> bool:
    return bool((pod.get("spec") or {}).get("nodeName"))


def _parse_version(resource_version: str) -> int:
    if not resource_version:
        return 0
    try:
        return int(resource_version)
    except ValueError:
        raise APIError(400, f"invalid resource version {resource_version!r}") from None


def _check_version(
    kind: ResourceKind, current: Mapping[str, Any], written: Mapping[str, Any]
) -> None:
    """Optimistic concurrency for an update or a patch: a resourceVersion in the metadata it
    writes (`written`) must be the stored object's, or ConflictError."""
    expected = written.get("resourceVersion")
    stored = current["metadata"]
    if expected and expected != stored["resourceVersion"]:
        raise ConflictError(
            f'Operation cannot be fulfilled on {kind.qualified_name} "{stored["name"]}": the'
            " object has been modified; please apply your changes to the latest version and try"
            " again"
        )


def _regarding_key(event: Mapping[str, Any]) -> str:
    regarding = event.get("regarding") or {}
    namespace, name = regarding.get("namespace") or "", regarding.get("name") or ""
    return f"{namespace}/{name}" if namespace else str(name)
