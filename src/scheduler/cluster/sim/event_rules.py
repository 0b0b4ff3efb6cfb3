"""The API server's checks on an events.k8s.io/v1 Event a scheduler creates.

The limits count bytes of UTF-8, as Go's `len` does; an Event that breaks one is refused with
422 and never stored, so a recorder that miscounts loses the Event. The simulated cluster
refuses it the same way, so that such a loss shows in tests run against it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scheduler.framework.errors import APIError

# (field in the request, field the server names in its error, most bytes it may hold)
_LIMITS = (
    ("reportingInstance", "reportingInstance", 128),
    ("action", "action", 128),
    ("reason", "reason", 128),
    ("note", "message", 1024),
)
_REQUIRED = (
    ("reportingController", "reportingController"),
    ("reportingInstance", "reportingInstance"),
    ("action", "action"),
    ("reason", "reason"),
)


def check_event(body: Mapping[str, Any]) -> None:
    """Raise the API server's 422 if `body` breaks a rule it enforces on create."""
    problems = [f"{path}: Required value" for key, path in _REQUIRED if not body.get(key)]
    for key, path, limit in _LIMITS:
        if len(str(body.get(key) or "").encode()) > limit:
            problems.append(f'{path}: Invalid value: "": can have at most {limit} characters')
    if problems:
        name = (body.get("metadata") or {}).get("name") or ""
        detail = problems[0] if len(problems) == 1 else f"[{', '.join(problems)}]"
        raise APIError(422, f'Event "{name}" is invalid: {detail}')
