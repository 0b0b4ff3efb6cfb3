"""Stands in for the kubelet and the pod garbage collector while a test runs.

The test control plane runs no kubelet, so a pod deleted with the default grace period (as
preemption deletes its victims) would stay Terminating forever and keep its node's resources.
`Reaper` watches the pods of one namespace in a background thread and force-deletes
(gracePeriodSeconds=0) every pod that gets a deletionTimestamp, the way a kubelet finishes a
graceful deletion once the containers are stopped. It keeps every version of every pod it saw,
so a test can still inspect a pod after it is gone (its last conditions, say) or check what a
pod's status said for a moment only.

The thread stops when the `with` block ends, and by itself after `lifetime_s` at the latest, so
a forgotten reaper cannot outlive its test by much.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Generator
from collections.abc import Iterator
from types import TracebackType
from typing import Any

from tests.e2e.api_client import ApiClient

Object = dict[str, Any]

# The server ends each watch after this long; the thread then notices a stop request, so this
# bounds how long stopping takes.
WATCH_WINDOW_S = 1
# A stream silent for longer than this (the window plus slack) means the connection is dead.
WATCH_SILENCE_S = 15.0
DEFAULT_LIFETIME_S = 300.0
# Pause after a failed list or watch before trying again (a restarting server, say).
RETRY_PAUSE_S = 0.2
JOIN_TIMEOUT_S = 30.0


class Reaper:
    """Force-deletes the terminating pods of `namespace` until stopped."""

    def __init__(
        self, admin: ApiClient, namespace: str, *, lifetime_s: float = DEFAULT_LIFETIME_S
    ) -> None:
        self.admin = admin
        self.namespace = namespace
        self.lifetime_s = lifetime_s
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._versions: dict[str, list[Object]] = {}
        self._reaped: dict[str, Object] = {}
        self._reaped_uids: set[str] = set()
        self._errors: list[str] = []
        self._retries: list[str] = []
        self._thread = threading.Thread(target=self._run, name=f"reaper-{namespace}", daemon=True)

    # ---- lifecycle -----------------------------------------------------------------------

    def start(self) -> None:
        self._thread.start()

    def stop(self, *, check: bool = True) -> None:
        """Stops the thread; with `check`, fails if it hung or a force deletion was refused."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(JOIN_TIMEOUT_S)
        if not check:
            return
        if self._thread.is_alive():
            raise AssertionError(f"reaper for {self.namespace} did not stop")
        if self._errors:
            raise AssertionError("reaper failures:\n" + "\n".join(self._errors))

    def __enter__(self) -> Reaper:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        # A failure inside the block is the one to report, not what it left the reaper with.
        self.stop(check=exc is None)

    # ---- what it saw ---------------------------------------------------------------------

    @property
    def reaped(self) -> dict[str, Object]:
        """Pod name -> the last version seen before it was force-deleted."""
        with self._lock:
            return dict(self._reaped)

    @property
    def retries(self) -> list[str]:
        """Why the watch had to start over, for a failing test's message."""
        with self._lock:
            return list(self._retries)

    def versions(self, name: str) -> list[Object]:
        """Every version of pod `name` seen, oldest first (a list after a broken watch
        repeats the current ones)."""
        with self._lock:
            return list(self._versions.get(name, ()))

    # ---- the thread ----------------------------------------------------------------------

    def _run(self) -> None:
        deadline = time.monotonic() + self.lifetime_s
        version = ""
        while not self._stop.is_set() and time.monotonic() < deadline:
            try:
                version = version or self._list()
                version = self._watch(version)
            except OSError as err:
                # The server restarting, or a connection reset: resume from a fresh list.
                self._note_retry(f"watch failed: {err}")
                version = ""

    def _list(self) -> str:
        """Observes every current pod; returns the version to watch from."""
        listed = self.admin.get(f"/api/v1/namespaces/{self.namespace}/pods")
        if listed.status != 200:
            raise OSError(f"listing pods: {listed}")
        for pod in listed.body["items"]:
            self._observe("ADDED", pod)
        return str(listed.body["metadata"]["resourceVersion"])

    def _watch(self, version: str) -> str:
        """One watch window; returns the version to resume from ("" to list again)."""
        with contextlib.closing(self._events(version)) as events:
            return self._follow(events, version)

    def _follow(self, events: Iterator[dict[str, Any]], version: str) -> str:
        for event in events:
            kind, obj = event.get("type"), event.get("object") or {}
            if kind == "ERROR":
                # Typically 410 Gone: the version is too old to resume from.
                return ""
            version = str((obj.get("metadata") or {}).get("resourceVersion") or version)
            if kind != "BOOKMARK":
                self._observe(str(kind), obj)
            if self._stop.is_set():
                break
        return version

    def _events(self, version: str) -> Generator[dict[str, Any], None, None]:
        query = (
            f"watch=1&resourceVersion={version}&allowWatchBookmarks=true"
            f"&timeoutSeconds={WATCH_WINDOW_S}"
        )
        path = f"/api/v1/namespaces/{self.namespace}/pods?{query}"
        # A generator of its own, so that closing it closes the connection too.
        yield from self.admin.watch(path, timeout_s=WATCH_SILENCE_S)

    def _observe(self, kind: str, pod: Object) -> None:
        meta = pod.get("metadata") or {}
        name, uid = str(meta.get("name")), str(meta.get("uid"))
        with self._lock:
            self._versions.setdefault(name, []).append(pod)
            if kind == "DELETED" or not meta.get("deletionTimestamp"):
                return
            if uid in self._reaped_uids:
                return
            self._reaped_uids.add(uid)
            self._reaped[name] = pod
        self._force_delete(name, uid)

    def _force_delete(self, name: str, uid: str) -> None:
        options = {
            "apiVersion": "v1",
            "kind": "DeleteOptions",
            "gracePeriodSeconds": 0,
            # Only this pod: never a newer one that took its name.
            "preconditions": {"uid": uid},
        }
        path = f"/api/v1/namespaces/{self.namespace}/pods/{name}"
        answer = self.admin.request("DELETE", path, options)
        # 404: already gone; 409: the name now belongs to another pod.
        if answer.status not in {200, 404, 409}:
            with self._lock:
                self._errors.append(f"force-deleting {name} ({uid}): {answer}")

    def _note_retry(self, what: str) -> None:
        with self._lock:
            self._retries.append(what)
        self._stop.wait(RETRY_PAUSE_S)
