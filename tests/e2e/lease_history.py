"""Every version of one Lease, in order, as a watch delivers them.

Polling could miss a short-lived state (a Lease released and taken a moment later); a watch
sees each write. A background thread follows the watch, reconnecting from the last version it
saw, and records when each version arrived.
"""

from __future__ import annotations

import http.client
import threading
import time
from dataclasses import dataclass
from types import TracebackType
from typing import Any

from tests.e2e.api_client import ApiClient
from tests.e2e.daemon import poll_until

LEASES = "/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"
# How long one watch read may block: also how quickly `stop` takes effect.
READ_TIMEOUT_S = 1.0
RETRY_PAUSE_S = 0.1


@dataclass(frozen=True)
class LeaseVersion:
    seen_at: float  # time.monotonic() when the version arrived
    holder: str
    transitions: int
    duration_s: int

    @classmethod
    def of(cls, lease: dict[str, Any], seen_at: float) -> LeaseVersion:
        spec = lease.get("spec") or {}
        return cls(
            seen_at=seen_at,
            holder=str(spec.get("holderIdentity") or ""),
            transitions=int(spec.get("leaseTransitions") or 0),
            duration_s=int(spec.get("leaseDurationSeconds") or 0),
        )


class LeaseHistory:
    def __init__(self, admin: ApiClient, namespace: str, name: str) -> None:
        self._admin = admin
        self._collection = LEASES.format(namespace=namespace)
        self._name = name
        self._versions: list[LeaseVersion] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._resource_version = ""

    def __enter__(self) -> LeaseHistory:
        listed = self._admin.get(f"{self._collection}?fieldSelector=metadata.name={self._name}")
        assert listed.status == 200, listed
        for lease in listed.body["items"]:
            self._record(lease)
        self._resource_version = listed.body["metadata"]["resourceVersion"]
        self._thread = threading.Thread(target=self._follow, name="lease-history", daemon=True)
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(READ_TIMEOUT_S * 5)

    @property
    def versions(self) -> list[LeaseVersion]:
        with self._lock:
            return list(self._versions)

    def holders(self) -> list[str]:
        """The holders in order, each change once (renewals by the same holder fold away)."""
        changes: list[str] = []
        for version in self.versions:
            if not changes or changes[-1] != version.holder:
                changes.append(version.holder)
        return changes

    def wait_for_holder(self, wanted: str, *, after: float, timeout_s: float) -> LeaseVersion:
        """The first version seen after `after` (monotonic) whose holder is `wanted`."""

        def found() -> LeaseVersion | None:
            return next(
                (v for v in self.versions if v.seen_at >= after and v.holder == wanted), None
            )

        return poll_until(found, f"lease held by {wanted!r}", timeout_s=timeout_s)

    def wait_for_new_holder(self, old: str, *, after: float, timeout_s: float) -> LeaseVersion:
        """The first version seen after `after` held by someone other than `old` (or nobody)."""

        def found() -> LeaseVersion | None:
            return next(
                (v for v in self.versions if v.seen_at >= after and v.holder not in ("", old)),
                None,
            )

        return poll_until(found, f"lease taken from {old!r}", timeout_s=timeout_s)

    def _record(self, lease: dict[str, Any]) -> None:
        with self._lock:
            self._versions.append(LeaseVersion.of(lease, time.monotonic()))

    def _follow(self) -> None:
        while not self._stop.is_set():
            path = (
                f"{self._collection}?watch=1&fieldSelector=metadata.name={self._name}"
                f"&resourceVersion={self._resource_version}&allowWatchBookmarks=true"
            )
            try:
                for event in self._admin.watch(path, timeout_s=READ_TIMEOUT_S):
                    obj = event.get("object") or {}
                    version = (obj.get("metadata") or {}).get("resourceVersion")
                    if event.get("type") in ("ADDED", "MODIFIED", "DELETED"):
                        self._record(obj)
                    if event.get("type") == "ERROR":
                        # Our version is too old (410): start over from the current state.
                        self._resource_version = ""
                        break
                    if version:
                        self._resource_version = version
                    if self._stop.is_set():
                        return
            except TimeoutError:
                continue  # a quiet stream: resume from the last version seen
            except (OSError, http.client.HTTPException, ValueError):
                # A dropped stream or a refused request: retry without spinning on it.
                self._stop.wait(RETRY_PAUSE_S)
