"""An informer: a local, always-catching-up copy of one resource, with change callbacks.

List, store, mark synced, then watch from the list's version. A 410 Gone means the history we
were following is gone: relist and report the difference to the store as adds, updates and
deletes. Any other failure is followed by a reconnect after a capped exponential backoff,
jittered so that a replica's informers (and the replicas) do not all retry in the same instant
when the API server comes back. The server ending a stream on its timeout is routine (watches
are kept short so a dead connection shows), so the informer re-watches at once, unless the
stream ended at once without an event, which would spin. `relist` makes the informer list
again and waits until that list is in the store: a new leader uses it to see every Binding the
API server had accepted when it took over. It cuts a backoff wait short: a leader that takes
the Lease after an outage has just heard from the API server, and waits for that list before
it schedules. The loop in `run` is thin; each step is a finite method.

Objects enter the store without `metadata.managedFields`: the server's field-ownership records
are often the largest part of a small object, nothing in the scheduler reads them, and a write
of a stored object without them leaves the server's as they were (client-go informers offer the
same trimming transform).
"""

from __future__ import annotations

import asyncio
import builtins
import random
from collections.abc import AsyncIterator
from collections.abc import Callable
from collections.abc import Coroutine
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from scheduler.cluster.port import ClusterClient
from scheduler.cluster.port import PagedLister
from scheduler.cluster.port import WatchEvent
from scheduler.framework.change_log import ChangeLog
from scheduler.framework.clock import Clock
from scheduler.framework.errors import APIError
from scheduler.framework.errors import GoneError
from scheduler.framework.errors import NotFoundError
from scheduler.framework.errors import error_text
from scheduler.observability import get_logger
from scheduler.observability import log_v

logger = get_logger(__name__)
# klog verbosity of the line each list writes (what a slow start-up is read from).
V_LIST = 2

Object = dict[str, Any]
AddHandler = Callable[[Object], None]
UpdateHandler = Callable[[Object, Object], None]
DeleteHandler = Callable[[Object], None]
ObjectKey = tuple[str, str]

# client-go's reflector: 800 ms doubling to 30 s.
INITIAL_BACKOFF = 0.8
MAX_BACKOFF = 30.0
# The shape of client-go's reflector backoff (apimachinery's wait.Backoff with Jitter 1.0):
# each wait is its step plus a random part of up to this factor times the step, and the step
# itself doubles without the random part, so at the cap waits fall in [30 s, 60 s).
BACKOFF_JITTER = 1.0
# A stream the server ends sooner than this after it opened, with no event on it, counts as a
# failure for the backoff (a server that closes every watch at once must not be hammered).
MIN_HEALTHY_WATCH = 1.0


def object_key(obj: Mapping[str, Any]) -> ObjectKey:
    meta = obj.get("metadata") or {}
    return (str(meta.get("namespace") or ""), str(meta.get("name") or ""))


def trim(obj: Object) -> Object:
    """`obj` without `metadata.managedFields` (see the module doc): `obj` itself when it has
    none, else a copy of its top level and metadata (the object may be shared)."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or "managedFields" not in meta:
        return obj
    return {**obj, "metadata": {k: v for k, v in meta.items() if k != "managedFields"}}


def resource_version_of(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion") or "")


class InformerStore:
    """The informer's objects by (namespace, name), and by any index a reader added; a
    `scheduler.framework.Lister`."""

    def __init__(self) -> None:
        self._objects: dict[ObjectKey, Object] = {}
        self._index_funcs: dict[str, Callable[[Object], str | None]] = {}
        self._indices: dict[str, dict[str, dict[ObjectKey, Object]]] = {}
        self._changes = ChangeLog()

    def add_index(self, name: str, index: Callable[[Object], str | None]) -> None:
        if name in self._index_funcs:
            return
        self._index_funcs[name] = index
        self._indices[name] = {}
        for key, obj in self._objects.items():
            self._index(name, key, obj)

    def by_index(self, name: str, value: str) -> builtins.list[Object]:
        return builtins.list(self._indices[name].get(value, {}).values())

    def _index(self, name: str, key: ObjectKey, obj: Object) -> None:
        value = self._index_funcs[name](obj)
        if value is not None:
            self._indices[name].setdefault(value, {})[key] = obj

    def _unindex(self, name: str, key: ObjectKey, obj: Object) -> None:
        value = self._index_funcs[name](obj)
        if value is None:
            return
        bucket = self._indices[name].get(value)
        if bucket is not None:
            bucket.pop(key, None)
            if not bucket:
                del self._indices[name][value]

    @property
    def revision(self) -> int:
        return self._changes.revision

    def changed_since(self, revision: int) -> Sequence[ObjectKey] | None:
        return self._changes.since(revision)

    def get(self, namespace: str, name: str) -> Object | None:
        return self._objects.get((namespace, name))

    def list(self, namespace: str | None = None) -> builtins.list[Object]:
        if namespace is None:
            return builtins.list(self._objects.values())
        return [obj for (ns, _), obj in self._objects.items() if ns == namespace]

    def __len__(self) -> int:
        return len(self._objects)

    def put(self, obj: Object) -> Object | None:
        """Store `obj`; returns what it replaced."""
        key = object_key(obj)
        old = self._objects.get(key)
        self._objects[key] = obj
        self._changes.record(key)
        for name in self._index_funcs:
            if old is not None:
                self._unindex(name, key, old)
            self._index(name, key, obj)
        return old

    def pop(self, key: ObjectKey) -> Object | None:
        gone = self._objects.pop(key, None)
        if gone is not None:
            self._changes.record(key)
            for name in self._index_funcs:
                self._unindex(name, key, gone)
        return gone

    def object_keys(self) -> builtins.list[ObjectKey]:
        return builtins.list(self._objects)


class Backoff:
    """Delays of `initial` doubling up to `cap`, each stretched by a `jitter()` draw from
    [0, 1) times `BACKOFF_JITTER`; `reset` after a success."""

    def __init__(
        self,
        initial: float = INITIAL_BACKOFF,
        cap: float = MAX_BACKOFF,
        jitter: Callable[[], float] = random.random,
    ) -> None:
        self._initial = initial
        self._cap = cap
        self._jitter = jitter
        self._next = initial

    def next(self) -> float:
        step = self._next
        self._next = min(step * 2, self._cap)
        # To the millisecond: finer means nothing to a retry, and the wait is logged.
        return round(step * (1 + BACKOFF_JITTER * self._jitter()), 3)

    def reset(self) -> None:
        self._next = self._initial


def _ignore(*_: Object) -> None:
    return None


class Informer:
    def __init__(
        self,
        client: ClusterClient,
        resource: str,
        *,
        clock: Clock,
        field_selector: str | None = None,
        on_add: AddHandler = _ignore,
        on_update: UpdateHandler = _ignore,
        on_delete: DeleteHandler = _ignore,
        name: str = "",
        jitter: Callable[[], float] = random.random,
    ) -> None:
        """`jitter` draws from [0, 1) to stretch each backoff wait (see `Backoff`)."""
        self.name = name or f"{resource}-informer"
        self.resource = resource
        self.store = InformerStore()
        self.synced = asyncio.Event()
        self._client = client
        self._clock = clock
        self._field_selector = field_selector
        self._on_add = on_add
        self._on_update = on_update
        self._on_delete = on_delete
        self._backoff = Backoff(jitter=jitter)
        self._resource_version = ""
        self._must_list = True
        self._gone_in_a_row = 0
        # Lists started and finished, for `relist` to wait on one that began after its call.
        self._lists_started = 0
        self._lists_done = 0
        # When the latest list was sent (Clock time), None before the first.
        self.last_list_started: float | None = None
        # Why the latest list or watch failed ("" once a list has succeeded since): for a
        # caller that gives up waiting to say why.
        self.last_error = ""
        self._listed = asyncio.Condition()
        self._relist_requested = asyncio.Event()
        self._stream_events = 0
        # Handler calls kept back while a scheduling attempt awaits (see `hold`).
        self._held: list[tuple[Callable[..., None], tuple[Object, ...]]] | None = None

    @property
    def resource_version(self) -> str:
        """The version the next watch resumes from."""
        return self._resource_version

    @property
    def has_synced(self) -> bool:
        return self.synced.is_set()

    async def run(self) -> None:
        """Keep the store current until cancelled."""
        while True:
            await self.run_once()

    async def run_once(self) -> None:
        """One connection: relist if needed, watch until the stream ends or fails, then wait
        before the next connection as the outcome demands."""
        try:
            if self._must_list and not await self._list_if_served():
                return
            opened = self._clock.now()
            if not await self._watch_unless_relist_requested():
                return
        except GoneError as error:
            self._must_list = True
            self._gone_in_a_row += 1
            logger.info("Watch expired; relisting", informer=self.name, reason=error.text)
            if self._gone_in_a_row > 1:
                # Gone again with no event since the last relist: do not spin on a server that
                # keeps saying so.
                await self._back_off(self._backoff.next())
        except APIError as error:
            # The server refused, or did not answer: expected while it restarts or is
            # unreachable, and the error says it all. One line per attempt, not a traceback.
            delay = self._backoff.next()
            self.last_error = error_text(error)
            logger.warning(
                "List/watch failed; retrying", informer=self.name, delay=delay, err=str(error)
            )
            await self._back_off(delay)
        except Exception as error:
            delay = self._backoff.next()
            self.last_error = f"{type(error).__name__}: {error}"
            logger.warning(
                "List/watch failed; retrying", informer=self.name, delay=delay, exc_info=True
            )
            await self._back_off(delay)
        else:
            if self._stream_events or self._clock.now() - opened >= MIN_HEALTHY_WATCH:
                logger.debug("%s: watch stream ended; watching again", self.name)
                return
            delay = self._backoff.next()
            logger.debug(
                "Watch stream ended at once; reconnecting", informer=self.name, delay=delay
            )
            await self._back_off(delay)

    async def relist(self) -> None:
        """Return once a list that started after this call has replaced the store (an open
        watch is ended for it, a backoff wait cut short)."""
        wanted = self._lists_started + 1
        self._must_list = True
        self._relist_requested.set()
        async with self._listed:
            await self._listed.wait_for(lambda: self._lists_done >= wanted)

    async def _watch_unless_relist_requested(self) -> bool:
        """Watch until the stream ends (True) or a relist is requested (False)."""
        watch = await self._unless_relist_requested(self.watch_until_closed())
        if watch is None:
            return False
        watch.result()  # re-raise what ended the stream, if anything did
        return True

    async def _back_off(self, delay: float) -> None:
        """Wait `delay` seconds before the next connection, or until a relist is requested:
        whoever asked waits for that list, and the server may well be back."""
        await self._unless_relist_requested(self._clock.sleep(delay))

    async def _unless_relist_requested(
        self, work: Coroutine[Any, Any, None]
    ) -> asyncio.Future[None] | None:
        """Run `work` until it ends or a relist is requested; the ended work, or None when a
        relist was requested (before or during it, which cancels it)."""
        if self._relist_requested.is_set():
            work.close()
            return None
        task = asyncio.ensure_future(work)
        requested = asyncio.ensure_future(self._relist_requested.wait())
        try:
            await asyncio.wait((task, requested), return_when=asyncio.FIRST_COMPLETED)
        finally:
            requested.cancel()
            if not task.done():
                task.cancel()
            await asyncio.gather(task, requested, return_exceptions=True)
        if task.cancelled() or self._relist_requested.is_set():
            return None
        return task

    async def _list_if_served(self) -> bool:
        """List; False (after a wait) if the server does not serve the resource at all.

        An optional API group or a custom resource whose CRD is not installed holds nothing:
        the informer counts as synced and empty, and keeps asking in case it appears. Once a
        list has succeeded, a 404 is an ordinary failure: an API server that is starting
        answers 404 for resources whose handlers it has not installed yet, and emptying the
        store then would drop every object it holds (for pods: the capacity they take).
        """
        try:
            await self.list_and_replace()
        except NotFoundError as error:
            if self._lists_done:
                raise
            self.replace([], "")
            self.synced.set()
            delay = self._backoff.next()
            logger.info("%s: not served (%s); asking again in %.1fs", self.name, error.text, delay)
            await self._back_off(delay)
            return False
        return True

    async def list_and_replace(self) -> None:
        """List, reconcile the store with the result, and mark the informer synced."""
        self._lists_started += 1
        started = self._lists_started
        self.last_list_started = self._clock.now()
        self._relist_requested.clear()
        sent = self._clock.now()
        resource_version, pages = await self._list_page_by_page()
        self._resource_version = resource_version
        self._must_list = self._relist_requested.is_set()
        self._backoff.reset()
        self.last_error = ""
        self.synced.set()
        log_v(
            logger,
            V_LIST,
            "Caches populated",
            informer=self.name,
            objects=len(self.store),
            pages=pages,
            seconds=round(self._clock.now() - sent, 3),
        )
        async with self._listed:
            self._lists_done = max(self._lists_done, started)
            self._listed.notify_all()

    async def _list_page_by_page(self) -> tuple[str, int]:
        """Store each page of a list as it arrives (the client fetches the next meanwhile),
        then drop what the list did not hold; returns the version to watch from and the count
        of pages. The informer is not synced until the last page is in, so nothing schedules
        against a partial picture."""
        if not isinstance(self._client, PagedLister):
            listed = await self._client.list(self.resource, field_selector=self._field_selector)
            self.replace(listed.items, listed.resource_version)
            return listed.resource_version, 1
        seen: set[ObjectKey] = set()
        version = ""
        count = 0
        pages = self._client.list_pages(self.resource, field_selector=self._field_selector)
        try:
            async for page in pages:
                if page.restarted:
                    # Pages stored so far are void; what they held and this list does not is
                    # dropped at the end like any other object gone.
                    seen = set()
                self._store_listed(page.items, seen)
                version = page.resource_version
                count += 1
        finally:
            await _close(pages)
        self._drop_unseen(seen)
        return version, count

    async def watch_until_closed(self) -> None:
        """Apply watch events until the stream ends; errors (GoneError included) propagate."""
        stream = self._client.watch(
            self.resource,
            resource_version=self._resource_version,
            field_selector=self._field_selector,
            allow_bookmarks=True,
        )
        self._stream_events = 0
        try:
            async for event in stream:
                self._stream_events += 1
                self._backoff.reset()
                self._gone_in_a_row = 0
                self.apply(event)
        finally:
            await _close(stream)

    def replace(self, items: Iterable[Object], resource_version: str) -> None:
        """Make the store hold exactly `items`, calling handlers for what differs."""
        seen: set[ObjectKey] = set()
        self._store_listed(items, seen)
        self._drop_unseen(seen)
        self._resource_version = resource_version

    def _store_listed(self, items: Iterable[Object], seen: set[ObjectKey]) -> None:
        """Put listed objects in the store, noting their keys in `seen`; handlers hear of the
        new and the changed."""
        for obj in map(trim, items):
            seen.add(object_key(obj))
            old = self.store.put(obj)
            if old is None:
                self._dispatch(self._on_add, obj)
            elif resource_version_of(old) != resource_version_of(obj):
                self._dispatch(self._on_update, old, obj)

    def _drop_unseen(self, seen: set[ObjectKey]) -> None:
        for key in self.store.object_keys():
            gone = None if key in seen else self.store.pop(key)
            if gone is not None:
                self._dispatch(self._on_delete, gone)

    def apply(self, event: WatchEvent) -> None:
        """Apply one watch event to the store and call the matching handler."""
        obj = trim(event.object)
        version = resource_version_of(obj)
        if version:
            self._resource_version = version
        if event.type == "BOOKMARK":
            return
        if event.type == "DELETED":
            if self.store.pop(object_key(obj)) is not None:
                self._dispatch(self._on_delete, obj)
            return
        old = self.store.put(obj)
        if old is None:
            self._dispatch(self._on_add, obj)
        else:
            self._dispatch(self._on_update, old, obj)

    def hold(self) -> None:
        """Keep handler calls back (the store still follows the cluster) until `release`:
        an attempt that awaits an HTTP extender needs the cache to stand still meanwhile."""
        if self._held is None:
            self._held = []

    def release(self) -> None:
        """Make the handler calls kept back since `hold`, in order."""
        held, self._held = self._held, None
        for handler, objects in held or ():
            self._dispatch(handler, *objects)

    def _dispatch(self, handler: Callable[..., None], *objects: Object) -> None:
        if self._held is not None:
            self._held.append((handler, objects))
            return
        try:
            handler(*objects)
        except Exception:
            # One bad handler must not stop the store from tracking the cluster.
            key = "/".join(p for p in object_key(objects[-1]) if p)
            logger.exception(
                "Event handler failed", informer=self.name, handler=repr(handler), object=key
            )


async def _close(stream: AsyncIterator[Any]) -> None:
    aclose = getattr(stream, "aclose", None)
    if aclose is not None:
        await aclose()
