"""Turning API server failures into the port's exceptions.

A failed request answers with an HTTP status and (usually) a `Status` object whose `message`
says what went wrong; a watch reports a failure in-band as an `ERROR` event carrying the same
kind of `Status`. Both map to the `APIError` family by code: 404 NotFoundError, 409
ConflictError, 410 GoneError, anything else APIError with the code.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from scheduler.framework.errors import APIError
from scheduler.framework.errors import ConflictError
from scheduler.framework.errors import GoneError
from scheduler.framework.errors import NotFoundError

# The status of an APIError raised when no HTTP answer arrived at all (connection refused or
# reset, timeout): callers treat it like any other failed request.
NO_RESPONSE = 0

# Status reasons that mean "the history you asked for is gone" even from servers that put a
# different code on them.
_GONE_REASONS = frozenset({"Expired", "Gone"})

_MAX_RAW_MESSAGE = 300


def error_for(code: int, message: str, reason: str = "") -> APIError:
    if code == 410 or reason in _GONE_REASONS:
        return GoneError(message)
    if code == 404:
        return NotFoundError(message)
    if code == 409:
        return ConflictError(message)
    return APIError(code, message)


def is_uid_mismatch(error: APIError) -> bool:
    """Whether a 409 says the object's uid is not the one a precondition named, i.e. the object
    was deleted and recreated under the same name. Servers word it in two ways: "UID in
    precondition: ..." (storage layer) and "the UID in the precondition (...)" (registry)."""
    text = error.text
    return error.status == 409 and (
        "UID in precondition" in text or "UID in the precondition" in text
    )


def error_from_status(status: Mapping[str, Any], fallback_code: int = 500) -> APIError:
    """The exception for a `Status` object (a failed response's body or a watch ERROR)."""
    code = status.get("code")
    code = code if isinstance(code, int) and code > 0 else fallback_code
    reason = str(status.get("reason") or "")
    message = str(status.get("message") or reason or f"HTTP {code}")
    return error_for(code, message, reason)


def error_from_response(
    code: int, body: bytes, http_reason: str = "", retry_after: str | None = None
) -> APIError:
    """The exception for a failed HTTP response. The body is a `Status` from the API server;
    anything else (a proxy's HTML page, say) is quoted, shortened, as the message. A
    Retry-After header (in seconds, as the API server writes it) is kept on the error."""
    status = _parse_status(body)
    if status is not None:
        # The HTTP code is authoritative; the Status body's own code only fills in its absence.
        error = error_from_status({**status, "code": code})
    else:
        text = body.decode("utf-8", errors="replace").strip()
        if len(text) > _MAX_RAW_MESSAGE:
            text = text[:_MAX_RAW_MESSAGE] + "..."
        error = error_for(code, text or http_reason or f"HTTP {code}")
    error.retry_after = parse_retry_after(retry_after)
    return error


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header; None when absent or not a non-negative number (the
    HTTP-date form is never sent by the API server)."""
    if not value:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return seconds if math.isfinite(seconds) and seconds >= 0 else None


def _parse_status(body: bytes) -> dict[str, Any] | None:
    try:
        parsed = json.loads(body) if body else None
    except ValueError:
        return None
    if isinstance(parsed, dict) and parsed.get("kind") == "Status":
        return parsed
    return None
