"""Counting bound pods the way scheduler_perf's throughput collector does.

One thread keeps a raw watch on the benchmark namespace's pods and records each pod's first
transition to a set `spec.nodeName`; the caller samples the count once a second.

For the churn load it also notes when the watch first saw each pod pending, so that a pod's
scheduling latency (created -> bound) is two readings of one clock, the bench's own, whichever
scheduler runs. (The pods' creationTimestamp counts whole seconds only.)
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable
from collections.abc import Sequence
from typing import Any

from tests.e2e.api_client import ApiClient

# The socket read timeout of one watch request; a silent stream is simply re-opened.
WATCH_READ_TIMEOUT_S = 30.0
WATCH_SERVER_TIMEOUT_S = 300
HTTP_GONE = 410


class BoundPodCounter:
    """A background watch on one namespace's pods that counts the ones with a node."""

    def __init__(self, client: ApiClient, namespace: str) -> None:
        self._client = client
        self._namespace = namespace
        self._bound: set[str] = set()
        self._pending_since: dict[str, float] = {}
        self._latencies: dict[str, float] = {}
        self._lock = threading.Lock()
        self._listed = threading.Event()
        self._stopping = threading.Event()
        self._error: BaseException | None = None
        self._first_bound_at: float | None = None
        self._last_bound_at: float | None = None
        self._thread = threading.Thread(target=self._run, name="bound-pod-watch", daemon=True)

    def start(self, timeout_s: float = 60.0) -> None:
        """Starts the watch and returns once the initial list has been taken."""
        self._thread.start()
        if not self._listed.wait(timeout_s):
            raise TimeoutError(f"listing pods in {self._namespace} took over {timeout_s:g} s")
        self.raise_if_failed()

    def stop(self) -> None:
        # The thread may sit in a blocking read; it is a daemon and notices the flag later.
        self._stopping.set()

    def bound(self) -> int:
        with self._lock:
            return len(self._bound)

    def seen_pending(self) -> int:
        """How many pods the watch saw arrive pending after its initial list."""
        with self._lock:
            return len(self._pending_since)

    def latencies(self) -> dict[str, float]:
        """Seconds from first seen pending to first seen bound, by pod name, for the pods
        that arrived after the initial list and are bound."""
        with self._lock:
            return dict(self._latencies)

    def bound_times(self) -> tuple[float | None, float | None]:
        """The monotonic times the watch saw the first and the latest pod become bound."""
        with self._lock:
            return self._first_bound_at, self._last_bound_at

    def raise_if_failed(self) -> None:
        if self._error is not None:
            raise RuntimeError(f"the pod watch failed: {self._error!r}") from self._error

    # ---------------------------------------------------------------- internals

    def _run(self) -> None:
        try:
            resource_version = self._list()
            self._listed.set()
            while not self._stopping.is_set():
                resource_version = self._watch(resource_version) or self._list()
        except BaseException as err:  # handed to the sampling thread
            self._error = err
            self._listed.set()

    def _list(self) -> str:
        answer = self._client.get(f"/api/v1/namespaces/{self._namespace}/pods")
        if answer.status != 200:
            raise RuntimeError(f"listing pods: {answer}")
        for pod in answer.body["items"]:
            self._observe(pod)
        version: str = answer.body["metadata"]["resourceVersion"]
        return version

    def _watch(self, resource_version: str) -> str | None:
        """Follows one watch request; returns where to resume, or None when a re-list is due."""
        path = (
            f"/api/v1/namespaces/{self._namespace}/pods?watch=1&allowWatchBookmarks=true"
            f"&resourceVersion={resource_version}&timeoutSeconds={WATCH_SERVER_TIMEOUT_S}"
        )
        try:
            for event in self._client.watch(path, timeout_s=WATCH_READ_TIMEOUT_S):
                kind, obj = event.get("type"), event.get("object") or {}
                if kind == "ERROR":
                    if obj.get("code") == HTTP_GONE:
                        return None
                    raise RuntimeError(f"watch error event: {obj}")
                resource_version = obj.get("metadata", {}).get("resourceVersion", resource_version)
                if kind in {"ADDED", "MODIFIED"}:
                    self._observe(obj)
                if self._stopping.is_set():
                    break
        except TimeoutError:
            pass
        return resource_version

    def _observe(self, pod: dict[str, Any]) -> None:
        name = pod["metadata"]["name"]
        now = time.monotonic()
        if not pod.get("spec", {}).get("nodeName"):
            if self._listed.is_set():
                with self._lock:
                    self._pending_since.setdefault(name, now)
            return
        with self._lock:
            if name in self._bound:
                return
            self._bound.add(name)
            # Only bindings seen live count: the initial list happens before any scheduler.
            if self._listed.is_set():
                self._last_bound_at = now
                if self._first_bound_at is None:
                    self._first_bound_at = now
                if (since := self._pending_since.get(name)) is not None:
                    self._latencies[name] = now - since


def sample_until_all_bound(
    counter: BoundPodCounter,
    total: int,
    started: float,
    *,
    timeout_s: float,
    still_running: Callable[[], None],
) -> list[float]:
    """Samples the bound count every second from `started` (a monotonic time) until all
    `total` pods are bound; returns the per-second throughput samples (pods/s).
    `still_running()` raises when the scheduler has died."""
    samples: list[float] = []
    last_count, last_time = counter.bound(), started
    deadline = started + timeout_s
    next_tick = started + 1.0
    while True:
        time.sleep(max(0.0, min(next_tick, deadline) - time.monotonic()))
        now, count = time.monotonic(), counter.bound()
        counter.raise_if_failed()
        # Like scheduler_perf, skip the leading idle seconds before the first binding.
        if count > last_count or samples:
            samples.append((count - last_count) / (now - last_time))
        last_count, last_time = count, now
        if count >= total:
            return samples
        still_running()
        if now >= deadline:
            raise TimeoutError(f"only {count} of {total} pods bound within {timeout_s:g} s")
        next_tick += 1.0


def percentile(samples: Sequence[float], percent: float) -> float:
    """Nearest-rank percentile, as scheduler_perf computes its DataItems."""
    if not samples:
        return 0.0
    ordered = sorted(samples)
    rank = max(1, math.ceil(len(ordered) * percent / 100.0))
    return ordered[rank - 1]
