"""HTTP failures and watch ERROR events to the port's exceptions; decoding watch lines."""

from __future__ import annotations

import json
from typing import Any

import pytest

from scheduler.cluster.kube.errors import error_from_response
from scheduler.cluster.kube.errors import error_from_status
from scheduler.cluster.kube.errors import is_uid_mismatch
from scheduler.cluster.kube.transport import split_lines
from scheduler.cluster.kube.watch_events import decode_watch_event
from scheduler.framework.errors import APIError
from scheduler.framework.errors import ConflictError
from scheduler.framework.errors import GoneError
from scheduler.framework.errors import NotFoundError


def status(code: int | None, reason: str, message: str) -> dict[str, Any]:
    body: dict[str, Any] = {"kind": "Status", "status": "Failure", "reason": reason}
    if message:
        body["message"] = message
    if code is not None:
        body["code"] = code
    return body


@pytest.mark.parametrize(
    ("code", "body", "expected_type", "expected_text"),
    [
        (404, status(404, "NotFound", 'pods "a" not found'), NotFoundError, 'pods "a" not found'),
        (
            409,
            status(409, "Conflict", 'pod web is already assigned to node "n1"'),
            ConflictError,
            'pod web is already assigned to node "n1"',
        ),
        (409, status(409, "AlreadyExists", 'leases "s" already exists'), ConflictError, 'leases "s" already exists'),  # noqa: E501
        (410, status(410, "Expired", "too old resource version: 5 (90)"), GoneError, "too old resource version: 5 (90)"),  # noqa: E501
        (422, status(422, "Invalid", "spec.x: Invalid value"), APIError, "spec.x: Invalid value"),
        (403, status(403, "Forbidden", "pods is forbidden"), APIError, "pods is forbidden"),
        # A Status without a message names its reason.
        (500, status(500, "InternalError", ""), APIError, "InternalError"),
        # The HTTP code wins over a Status body that disagrees.
        (404, status(500, "NotFound", "gone"), NotFoundError, "gone"),
        # Not a Status at all: quote the body.
        (502, b"<html>bad gateway</html>", APIError, "<html>bad gateway</html>"),
        (503, b"", APIError, "Service Unavailable"),
    ],
    ids=["404", "409-assigned", "409-exists", "410", "422", "403", "500-no-message",
         "http-code-wins", "html", "empty"],
)  # fmt: skip
def test_error_from_response(
    code: int, body: Any, expected_type: type[APIError], expected_text: str
) -> None:
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    error = error_from_response(code, raw, "Service Unavailable")
    assert type(error) is expected_type
    assert error.status == code
    assert error.text == expected_text


def test_a_long_non_status_body_is_shortened() -> None:
    error = error_from_response(500, b"x" * 10_000)
    assert len(error.text) < 400
    assert error.text.endswith("...")


@pytest.mark.parametrize(
    ("status_object", "expected_type", "expected_code"),
    [
        (status(410, "Expired", "too old resource version"), GoneError, 410),
        # Old servers put 500 on an expired watch; the reason still says Gone.
        (status(500, "Gone", "too old resource version"), GoneError, 410),
        (status(500, "InternalError", "etcd is unhappy"), APIError, 500),
        (status(None, "", "no code"), APIError, 500),
        (status(403, "Forbidden", "watch is forbidden"), APIError, 403),
    ],
    ids=["410", "reason-gone", "500", "no-code", "403"],
)
def test_error_from_status(
    status_object: dict[str, Any], expected_type: type[APIError], expected_code: int
) -> None:
    error = error_from_status(status_object)
    assert type(error) is expected_type
    assert error.status == expected_code


def line(event_type: str, obj: dict[str, Any]) -> bytes:
    return json.dumps({"type": event_type, "object": obj}).encode()


@pytest.mark.parametrize("event_type", ["ADDED", "MODIFIED", "DELETED", "BOOKMARK"])
def test_decode_keeps_the_raw_object(event_type: str) -> None:
    obj = {"kind": "Pod", "metadata": {"name": "web", "resourceVersion": "17"}, "spec": {}}
    event = decode_watch_event(line(event_type, obj))
    assert event is not None
    assert event.type == event_type
    assert event.object == obj
    assert event.resource_version == "17"


def test_decode_raises_gone_for_an_expired_watch() -> None:
    with pytest.raises(GoneError, match="too old resource version: 3 \\(40\\)"):
        decode_watch_event(
            line("ERROR", status(410, "Expired", "too old resource version: 3 (40)"))
        )


def test_decode_skips_unknown_event_types() -> None:
    assert decode_watch_event(line("SOMETHING_NEW", {"metadata": {}})) is None


@pytest.mark.parametrize("raw", [b"{not json", b"[1, 2]"], ids=["broken", "not-an-object"])
def test_decode_rejects_malformed_lines(raw: bytes) -> None:
    with pytest.raises(APIError, match="malformed watch event"):
        decode_watch_event(raw)


async def collect(chunks: list[bytes]) -> list[bytes]:
    async def source() -> Any:
        for chunk in chunks:
            yield chunk

    return [line async for line in split_lines(source())]


@pytest.mark.parametrize(
    ("chunks", "expected"),
    [
        ([b'{"a":1}\n{"b":2}\n'], [b'{"a":1}', b'{"b":2}']),
        ([b'{"a"', b":1}\n{", b'"b":2}\n'], [b'{"a":1}', b'{"b":2}']),
        ([b'{"a":1}', b"\n", b"\n", b'{"b":2}'], [b'{"a":1}', b'{"b":2}']),
        ([b"\n  \n"], []),
        ([b'{"a":', b"1}"], [b'{"a":1}']),
    ],
    ids=["whole", "split-mid-line", "blank-lines", "only-blank", "no-final-newline"],
)
async def test_split_lines(chunks: list[bytes], expected: list[bytes]) -> None:
    assert await collect(chunks) == expected


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (
            ConflictError(
                'Operation cannot be fulfilled on Pod "web": the UID in the precondition (a)'
                " does not match the UID in record (b)"
            ),
            True,
        ),
        (
            ConflictError(
                'Operation cannot be fulfilled on leases "s": StorageError: invalid object,'
                " Precondition failed: UID in precondition: a, UID in object meta: "
            ),
            True,
        ),
        (ConflictError('pod web is already assigned to node "n1"'), False),
        (APIError(422, "the UID in the precondition is malformed"), False),
    ],
    ids=["registry-wording", "storage-wording", "already-bound", "not-a-conflict"],
)
def test_is_uid_mismatch(error: APIError, expected: bool) -> None:
    assert is_uid_mismatch(error) is expected
