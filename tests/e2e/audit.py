"""kube-apiserver's audit log as the tests' record of who bound what, and who held a Lease when.

The policy logs two things only, once each when the response is complete:
- pod Binding creates at Metadata level: the user, the pod, the status code and the times are
  all a Binding needs to be judged by;
- Lease writes at RequestResponse level: a tenure needs the holder each write left in the
  Lease (a renewal and a release look the same at Metadata level), and Leases are small.
Everything else is not logged, so the log stays small and the server's cost low.

Timestamps are the server's wall clock with microseconds; tests on the same machine compare them
with `time.time()` readings of their own.
"""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

POLICY: dict[str, Any] = {
    "apiVersion": "audit.k8s.io/v1",
    "kind": "Policy",
    "omitStages": ["RequestReceived", "ResponseStarted", "Panic"],
    "rules": [
        {
            "level": "Metadata",
            "verbs": ["create"],
            "resources": [{"group": "", "resources": ["pods/binding"]}],
        },
        {
            "level": "RequestResponse",
            "verbs": ["create", "update", "patch"],
            "resources": [{"group": "coordination.k8s.io", "resources": ["leases"]}],
        },
        {"level": "None"},
    ],
}


def write_policy(path: Path) -> Path:
    path.write_text(yaml.safe_dump(POLICY, sort_keys=False))
    return path


def _epoch(stamp: str) -> float:
    return datetime.datetime.fromisoformat(stamp).timestamp()


@dataclass(frozen=True)
class AuditRecord:
    """One logged request, reduced to what the checks read."""

    user: str
    verb: str
    resource: str
    subresource: str
    namespace: str
    name: str
    code: int
    received_at: float  # epoch seconds the server received the request
    completed_at: float  # epoch seconds the server completed the response
    response: dict[str, Any] | None

    @classmethod
    def of(cls, event: dict[str, Any]) -> AuditRecord:
        ref = event.get("objectRef") or {}
        response = event.get("responseObject")
        return cls(
            user=str((event.get("user") or {}).get("username", "")),
            verb=str(event.get("verb", "")),
            resource=str(ref.get("resource", "")),
            subresource=str(ref.get("subresource", "")),
            namespace=str(ref.get("namespace", "")),
            name=str(ref.get("name", "")),
            code=int((event.get("responseStatus") or {}).get("code", 0)),
            received_at=_epoch(event["requestReceivedTimestamp"]),
            completed_at=_epoch(event["stageTimestamp"]),
            response=response if isinstance(response, dict) else None,
        )

    @property
    def succeeded(self) -> bool:
        return 200 <= self.code < 300

    @property
    def is_binding(self) -> bool:
        return self.resource == "pods" and self.subresource == "binding"

    @property
    def is_lease_write(self) -> bool:
        return self.resource == "leases"

    def lease_spec(self) -> dict[str, Any]:
        """The Lease's spec as this write left it (empty when the write failed)."""
        response = self.response or {}
        spec = response.get("spec")
        if response.get("kind") != "Lease" or not isinstance(spec, dict):
            return {}
        return spec


class AuditLog:
    """Reads the log file as it grows; a server restart appends to the same file."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._offset = 0
        self._partial = b""
        self._records: list[AuditRecord] = []

    def records(self) -> list[AuditRecord]:
        """Every complete record written so far, in file order."""
        if self.path.exists():
            with self.path.open("rb") as log:
                log.seek(self._offset)
                chunk = log.read()
            self._offset += len(chunk)
            *lines, self._partial = (self._partial + chunk).split(b"\n")
            self._records.extend(AuditRecord.of(json.loads(line)) for line in lines if line)
        return list(self._records)
