"""Decoding one line of a watch stream: `{"type": ..., "object": {...}}` as a raw dict.

An `ERROR` line carries a `Status`; it ends the watch with the matching exception (410 Gone
when the requested resourceVersion is older than the server's history).
"""

from __future__ import annotations

from typing import Any
from typing import cast

from scheduler.cluster.kube.errors import NO_RESPONSE
from scheduler.cluster.kube.errors import error_from_status
from scheduler.cluster.kube.json_codec import decode
from scheduler.cluster.port import WatchEvent
from scheduler.cluster.port import WatchEventType
from scheduler.framework.errors import APIError
from scheduler.observability import get_logger

logger = get_logger(__name__)

_EVENT_TYPES = frozenset({"ADDED", "MODIFIED", "DELETED", "BOOKMARK"})


def decode_watch_event(line: bytes) -> WatchEvent | None:
    """The event on `line`; None for an event type this client does not know (skipped)."""
    try:
        document: Any = decode(line)
    except ValueError as error:
        raise APIError(NO_RESPONSE, f"malformed watch event: {error}") from error
    if not isinstance(document, dict):
        raise APIError(NO_RESPONSE, "malformed watch event: not a JSON object")
    kind = document.get("type")
    obj = document.get("object")
    if not isinstance(obj, dict):
        obj = {}
    if kind == "ERROR":
        raise error_from_status(obj)
    if kind not in _EVENT_TYPES:
        logger.debug("Skipping a watch event of unknown type", type=str(kind))
        return None
    return WatchEvent(cast(WatchEventType, kind), obj)
