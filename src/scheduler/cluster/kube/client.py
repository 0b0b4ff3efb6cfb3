"""KubeClusterClient: the cluster port over a real API server, raw dicts end to end.

Semantics follow the port (and the in-memory cluster that implements it too): namespaced
objects addressed without a namespace live in `default`; lists page through the whole
collection and return the version to watch from; a watch started from "" begins with the
current objects as ADDED events; HTTP 404/409/410 raise NotFoundError/ConflictError/GoneError,
and a request that gets no answer at all raises APIError with status 0.

Where the real server differs from the simulator, the server wins and callers must cope:
deleting a bound pod starts a graceful deletion rather than removing it at once; `update` of a
deleted object fails on the uid its body carries (409), or, for resources that allow it (Leases
among them), recreates it when the body has no uid; and `list` with namespace "" spans all
namespaces, as client-go's does.
"""

from __future__ import annotations

import asyncio
import builtins
from collections.abc import AsyncGenerator
from collections.abc import Mapping
from contextlib import aclosing
from typing import Any

from scheduler.cluster.kube.bodies import binding
from scheduler.cluster.kube.bodies import delete_options
from scheduler.cluster.kube.bodies import event_body
from scheduler.cluster.kube.bodies import name_of
from scheduler.cluster.kube.bodies import namespace_of
from scheduler.cluster.kube.bodies import status_patch
from scheduler.cluster.kube.bodies import typed
from scheduler.cluster.kube.errors import is_uid_mismatch
from scheduler.cluster.kube.resources import ApiResource
from scheduler.cluster.kube.resources import ResourceTable
from scheduler.cluster.kube.transport import MERGE_PATCH
from scheduler.cluster.kube.transport import STRATEGIC_MERGE_PATCH
from scheduler.cluster.kube.transport import RequestObserver
from scheduler.cluster.kube.transport import Transport
from scheduler.cluster.kube.watch_events import decode_watch_event
from scheduler.cluster.port import ListPage
from scheduler.cluster.port import ObjectList
from scheduler.cluster.port import WatchEvent
from scheduler.framework.clock import Clock
from scheduler.framework.clock import SystemClock
from scheduler.framework.errors import APIError
from scheduler.framework.errors import ConflictError
from scheduler.framework.errors import GoneError
from scheduler.framework.errors import NotFoundError
from scheduler.objects.pod import Pod
from scheduler.observability import get_logger

logger = get_logger(__name__)

LIST_PAGE_SIZE = 500
# The server ends each watch after this long; the informer then resumes from its last version
# at once. client-go asks for 5-10 minutes and relies on HTTP/2 health pings to notice a dead
# connection within about 45 s. Over HTTP/1.1 there is no ping, and a quiet watch may carry no
# byte for a minute (bookmarks come about once a minute), so silence alone cannot tell a dead
# connection from a quiet one. A short server-side timeout can: a live server always ends the
# stream on time, so silence past the timeout plus a margin means nobody is on the other end.
# Re-watching from a resourceVersion is cheap for the server (its watch cache serves it).
DEFAULT_WATCH_TIMEOUT = 30
WATCH_SILENCE_MARGIN = 15.0
# Waits between asking whether a Binding answered with an error was made after all.
UNCERTAIN_BINDING_RETRIES = (0.5, 1.0, 2.0, 4.0, 8.0, 8.0, 8.0)
# kube-scheduler's PatchPodStatus tries a pod status patch four times, with client-go's
# DefaultBackoff between (10 ms, x5 each time; its 10 % jitter left out, for a test clock).
POD_STATUS_PATCH_RETRIES = (0.01, 0.05, 0.25)


def _typed_items(kind: ApiResource, answer: Mapping[str, Any]) -> builtins.list[dict[str, Any]]:
    items: builtins.list[dict[str, Any]] = answer.get("items") or []
    for item in items:
        # List items come without apiVersion/kind; watch events and gets carry them.
        item.setdefault("apiVersion", kind.api_version)
        item.setdefault("kind", kind.kind)
    return items


def _passing(error: APIError) -> bool:
    """Upstream's Retriable: an internal error, the server unavailable, a conflict, or a
    refused connection, which a moment may clear."""
    return error.status in (500, 503, 409) or error.connection_refused


def _discard(request: asyncio.Future[dict[str, Any]]) -> None:
    """Cancel a page request nobody will read; one already failed has its error consumed."""
    if not request.done():
        request.cancel()
    elif not request.cancelled():
        request.exception()


class KubeClusterClient:
    """Implements `scheduler.cluster.port.ClusterClient` against a kube-apiserver."""

    def __init__(
        self,
        transport: Transport,
        *,
        clock: Clock | None = None,
        resources: ResourceTable | None = None,
        watch_timeout: int = DEFAULT_WATCH_TIMEOUT,
        page_size: int = LIST_PAGE_SIZE,
    ) -> None:
        self._transport = transport
        # Only Event names read the time.
        self._clock: Clock = clock if clock is not None else SystemClock()
        self._resources = resources if resources is not None else ResourceTable()
        self._watch_timeout = watch_timeout
        self._page_size = page_size

    def observe_requests(self, observer: RequestObserver) -> None:
        """Report every request's rate-limiter wait and outcome to `observer` from now on."""
        self._transport.observer = observer

    @property
    def connection_limit(self) -> int:
        """How many connections this client's pool may hold open at once."""
        return self._transport.connection_limit

    @property
    def resources(self) -> ResourceTable:
        """The resources this client can address; register custom resources here."""
        return self._resources

    # Reads -----------------------------------------------------------------------------------

    async def list(
        self,
        resource: str,
        *,
        namespace: str | None = None,
        field_selector: str | None = None,
    ) -> ObjectList:
        """Page through the collection. If a page's continue token expires (410) before the
        end, list again in one piece, as client-go's pager does."""
        items: builtins.list[dict[str, Any]] = []
        version = ""
        pages = self.list_pages(resource, namespace=namespace, field_selector=field_selector)
        async with aclosing(pages):
            async for page in pages:
                if page.restarted:
                    items.clear()
                items.extend(page.items)
                version = page.resource_version
        return ObjectList(items, version)

    async def list_pages(
        self,
        resource: str,
        *,
        namespace: str | None = None,
        field_selector: str | None = None,
    ) -> AsyncGenerator[ListPage, None]:
        """The pages of `list`, each yielded once the request for the next one is on its way,
        so the server prepares page k+1 while the caller stores page k."""
        kind = self._resources[resource]
        path = kind.collection_path(namespace)
        selector = [("fieldSelector", field_selector)] if field_selector else []
        limit = [("limit", str(self._page_size))]
        answer = await self._transport.request("GET", path, query=[*selector, *limit])
        restarted = False
        while True:
            meta = answer.get("metadata") or {}
            token = str(meta.get("continue") or "")
            following = None
            if token:
                query = [*selector, *limit, ("continue", token)]
                following = asyncio.ensure_future(self._transport.request("GET", path, query=query))
                # One turn of the loop lets the request go out before the caller's work.
                await asyncio.sleep(0)
            try:
                yield ListPage(
                    _typed_items(kind, answer),
                    str(meta.get("resourceVersion") or ""),
                    restarted,
                )
                if following is None:
                    return
                try:
                    answer = await following
                    restarted = False
                except GoneError:
                    logger.info(
                        "List expired while paging; listing in one piece", resource=resource
                    )
                    answer = await self._transport.request("GET", path, query=selector)
                    restarted = True
            finally:
                if following is not None:
                    _discard(following)

    async def watch(
        self,
        resource: str,
        *,
        resource_version: str,
        field_selector: str | None = None,
        allow_bookmarks: bool = True,
    ) -> AsyncGenerator[WatchEvent, None]:
        kind = self._resources[resource]
        query = [("watch", "1"), ("timeoutSeconds", str(self._watch_timeout))]
        if resource_version:
            query.append(("resourceVersion", resource_version))
        if allow_bookmarks:
            query.append(("allowWatchBookmarks", "true"))
        if field_selector:
            query.append(("fieldSelector", field_selector))
        lines = self._transport.stream_lines(
            kind.collection_path(None),
            query=query,
            read_timeout=self._watch_timeout + WATCH_SILENCE_MARGIN,
        )
        async with aclosing(lines):
            async for line in lines:
                event = decode_watch_event(line)
                if event is not None:
                    yield event

    async def get(self, resource: str, namespace: str, name: str) -> dict[str, Any]:
        path = self._resources[resource].object_path(namespace, name)
        return await self._transport.request("GET", path)

    # Writes ----------------------------------------------------------------------------------

    async def create(self, resource: str, obj: Mapping[str, Any]) -> dict[str, Any]:
        kind = self._resources[resource]
        path = kind.collection_path(namespace_of(kind, obj))
        return await self._transport.request("POST", path, body=typed(kind, obj))

    async def update(self, resource: str, obj: Mapping[str, Any]) -> dict[str, Any]:
        """PUT the object; the server rejects a stale `metadata.resourceVersion` with 409."""
        kind = self._resources[resource]
        path = kind.object_path(namespace_of(kind, obj), name_of(obj))
        return await self._transport.request("PUT", path, body=typed(kind, obj))

    async def delete(self, resource: str, namespace: str, name: str) -> None:
        path = self._resources[resource].object_path(namespace, name)
        await self._transport.send("DELETE", path, body=None)

    async def bind(self, pod: Pod, node_name: str) -> None:
        path = self._resources["pods"].object_path(pod.namespace, pod.name, "binding")
        body = binding(pod.namespace, pod.name, pod.uid, node_name)
        try:
            # The answer is a Status with code 201; there is nothing in it to keep.
            await self._transport.send("POST", path, body=body)
        except ConflictError as error:
            if is_uid_mismatch(error):
                # The pod we scheduled is gone; another took its name. The port (and the
                # simulator) call that NotFound, the server a failed precondition.
                raise NotFoundError(error.text) from error
            raise
        except APIError as error:
            # No answer, or a 5xx (an API server timing out or shutting down, say): the
            # Binding may have been made all the same. Until the server says which, the pod
            # keeps its place in the cache (its binding cycle is still running), so nothing
            # else is placed in its room; if it now sits on our node, it is bound.
            if not error.retriable or not await self._made_anyway(pod, node_name):
                raise
            logger.info("Binding answered with an error but was made", pod=pod.key, err=str(error))

    async def _made_anyway(self, pod: Pod, node_name: str) -> bool:
        """Whether `pod` is bound to `node_name`, asking until the server answers (for up to
        about half a minute, which outlasts an API server restart)."""
        for delay in UNCERTAIN_BINDING_RETRIES:
            try:
                current = await self.get("pods", pod.namespace, pod.name)
            except NotFoundError:
                return False
            except APIError:
                await self._clock.sleep(delay)
                continue
            meta = current.get("metadata") or {}
            spec = current.get("spec") or {}
            return meta.get("uid") == pod.uid and spec.get("nodeName") == node_name
        return False

    async def delete_pod(
        self,
        namespace: str,
        name: str,
        uid: str = "",
        *,
        grace_period_seconds: int | None = None,
    ) -> None:
        """Delete the pod, only if it is still the one with `uid` (when given): 409 otherwise."""
        path = self._resources["pods"].object_path(namespace, name)
        body = delete_options(uid, grace_period_seconds)
        await self._transport.send("DELETE", path, body=body)

    async def patch_pod_status(self, namespace: str, name: str, patch: Mapping[str, Any]) -> None:
        """Strategic-merge-patch the status subresource: conditions merge by `type` there and a
        None value removes a field, as the port promises."""
        path = self._resources["pods"].object_path(namespace, name, "status")
        body = status_patch(patch)
        # As kube-scheduler's PatchPodStatus: an error a moment may clear is tried again.
        for delay in (*POD_STATUS_PATCH_RETRIES, None):
            try:
                await self._transport.send(
                    "PATCH", path, body=body, content_type=STRATEGIC_MERGE_PATCH
                )
                return
            except APIError as error:
                if delay is None or not _passing(error):
                    raise
                await self._clock.sleep(delay)

    async def patch_object(
        self,
        resource: str,
        namespace: str,
        name: str,
        patch: Mapping[str, Any],
        subresource: str = "",
    ) -> None:
        """JSON merge patch (RFC 7386); a `metadata.resourceVersion` in it is a precondition."""
        path = self._resources[resource].object_path(namespace, name, subresource)
        await self._transport.send("PATCH", path, body=patch, content_type=MERGE_PATCH)

    async def create_event(self, event: Mapping[str, Any]) -> None:
        body = event_body(event, self._clock.wall())
        path = self._resources["events"].collection_path(body["metadata"]["namespace"])
        # The server answers with the Event as created; nothing here reads it.
        await self._transport.send("POST", path, body=body)

    async def close(self) -> None:
        await self._transport.close()
