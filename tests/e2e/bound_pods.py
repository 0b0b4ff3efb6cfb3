"""How many pods of one namespace have a node, followed live through a watch.

The chaos test decides when to strike by how far scheduling has got; listing thousands of pods
a few times a second would load the very server under test, a watch costs nothing. The thread
lists and watches again whenever the stream breaks (the server restarting, say).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Generator
from types import TracebackType
from typing import Any

from tests.e2e.api_client import ApiClient

# The server ends each watch after this long, so a stop request takes effect within it.
WATCH_WINDOW_S = 5
WATCH_SILENCE_S = 15.0
RETRY_PAUSE_S = 0.2
JOIN_TIMEOUT_S = 30.0


class BoundPods:
    def __init__(self, admin: ApiClient, namespace: str) -> None:
        self._admin = admin
        self._collection = f"/api/v1/namespaces/{namespace}/pods"
        self._bound: set[str] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="bound-pods", daemon=True)

    def __enter__(self) -> BoundPods:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join(JOIN_TIMEOUT_S)

    def count(self) -> int:
        with self._lock:
            return len(self._bound)

    def _run(self) -> None:
        version = ""
        while not self._stop.is_set():
            try:
                version = self._watch(version or self._list())
            except (OSError, ValueError):
                version = ""
                self._stop.wait(RETRY_PAUSE_S)

    def _list(self) -> str:
        listed = self._admin.get(self._collection)
        if listed.status != 200:
            raise OSError(f"listing pods: {listed}")
        for pod in listed.body["items"]:
            self._observe(pod)
        return str(listed.body["metadata"]["resourceVersion"])

    def _watch(self, version: str) -> str:
        """One watch window; returns the version to resume from ("" to list again)."""
        with contextlib.closing(self._events(version)) as events:
            for event in events:
                obj = event.get("object") or {}
                if event.get("type") == "ERROR":
                    return ""  # too old a version (410): list again
                version = str((obj.get("metadata") or {}).get("resourceVersion") or version)
                self._observe(obj)
                if self._stop.is_set():
                    break
        return version

    def _events(self, version: str) -> Generator[dict[str, Any], None, None]:
        query = f"watch=1&resourceVersion={version}&timeoutSeconds={WATCH_WINDOW_S}"
        # A generator of its own, so that closing it closes the connection too.
        yield from self._admin.watch(f"{self._collection}?{query}", timeout_s=WATCH_SILENCE_S)

    def _observe(self, pod: dict[str, Any]) -> None:
        if (pod.get("spec") or {}).get("nodeName"):
            with self._lock:
                self._bound.add(str(pod["metadata"]["name"]))
