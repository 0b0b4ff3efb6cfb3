"""The name of a new Event: the regarded object's name, a dot and the time in nanoseconds as
hex, as client-go names Events, so `kubectl get events` lists ours alike.

A regarded name near the 253-character limit leaves no room for the stamp; such a name is no
valid object name, and client-go (then we) names the Event with a random UUID instead, so the
API server does not refuse it.
"""

from __future__ import annotations

import uuid

from scheduler.objects.names import subdomain_problems


def event_name(regarding: str, unix_nanos: int) -> str:
    name = f"{regarding}.{unix_nanos:x}"
    return str(uuid.uuid4()) if subdomain_problems(name) else name
