"""Writes over connections of the client's own: answers framed every way HTTP/1.1 allows,
connections reused only when that is safe, and failures as the port reports them."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field

import pytest
from kubernetes_asyncio.client import Configuration

from scheduler.cluster.kube import KubeClusterClient
from scheduler.cluster.kube import new_client
from scheduler.cluster.kube.errors import NO_RESPONSE
from scheduler.cluster.kube.http1 import KEEPALIVE_S
from scheduler.framework.errors import APIError
from scheduler.framework.errors import ConflictError
from scheduler.objects.pod import Pod
from scheduler.testing import FakeClock
from scheduler.testing import make_pod
from tests.cluster.kube.conftest import until_sleeping

CREATED = b'{"kind":"Status","code":201}'


def answer(status: str, body: bytes, *headers: str) -> bytes:
    head = [f"HTTP/1.1 {status}", f"Content-Length: {len(body)}", *headers]
    return ("\r\n".join(head) + "\r\n\r\n").encode() + body


def chunked(status: str, *chunks: bytes) -> bytes:
    framed = b"".join(b"%x\r\n%s\r\n" % (len(c), c) for c in chunks)
    return (
        f"HTTP/1.1 {status}\r\nTransfer-Encoding: chunked\r\n\r\n".encode() + framed + b"0\r\n\r\n"
    )


@dataclass
class RawServer:
    """Answers each request with the next scripted bytes, and records what it was sent."""

    answers: list[bytes] = field(default_factory=list)
    requests: list[tuple[str, dict[str, str], bytes]] = field(default_factory=list)
    connections: int = 0
    port: int = 0

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while self.answers:
                head = await reader.readuntil(b"\r\n\r\n")
                line, *header_lines = head[:-4].decode().split("\r\n")
                # Header names are case-insensitive: recorded in lower case.
                headers = {k.lower(): v for k, v in (h.split(": ", 1) for h in header_lines)}
                body = await reader.readexactly(int(headers.get("content-length", "0")))
                self.requests.append((line, headers, body))
                scripted = self.answers.pop(0)
                writer.write(scripted)
                await writer.drain()
                if b"Connection: close" in scripted:
                    break
        except asyncio.IncompleteReadError:
            pass
        finally:
            writer.close()


@pytest.fixture
async def server() -> AsyncIterator[RawServer]:
    raw = RawServer()
    listening = await asyncio.start_server(raw.serve, "127.0.0.1", 0)
    raw.port = listening.sockets[0].getsockname()[1]
    async with listening:
        yield raw


@pytest.fixture
async def connect(
    server: RawServer, clock: FakeClock
) -> AsyncIterator[Callable[[], KubeClusterClient]]:
    made: list[KubeClusterClient] = []

    def client() -> KubeClusterClient:
        configuration = Configuration(host=f"http://127.0.0.1:{server.port}")
        configuration.api_key["BearerToken"] = "Bearer s3cret"
        made.append(new_client(configuration, qps=-1, burst=1, user_agent="ua/1", clock=clock))
        return made[-1]

    yield client
    for each in made:
        await each.close()


def web_pod() -> Pod:
    raw = make_pod("web").dict()
    raw["metadata"].update({"namespace": "team-a", "uid": "uid-1"})
    return Pod.from_dict(raw)


async def test_a_binding_is_one_request_with_every_header_the_server_needs(
    server: RawServer, connect: Callable[[], KubeClusterClient]
) -> None:
    server.answers.append(answer("201 Created", CREATED))
    await connect().bind(web_pod(), "n1")
    [(line, headers, body)] = server.requests
    assert line == "POST /api/v1/namespaces/team-a/pods/web/binding HTTP/1.1"
    assert headers["host"] == f"127.0.0.1:{server.port}"
    assert headers["authorization"] == "Bearer s3cret"
    assert headers["user-agent"] == "ua/1"
    assert headers["content-type"] == headers["accept"] == "application/json"
    assert json.loads(body)["target"] == {"apiVersion": "v1", "kind": "Node", "name": "n1"}


async def test_answers_of_every_framing_leave_the_connection_reusable(
    server: RawServer, connect: Callable[[], KubeClusterClient]
) -> None:
    server.answers += [
        answer("201 Created", CREATED),
        chunked("201 Created", b'{"kind":', b'"Event"}'),
        answer("201 Created", b""),
    ]
    client = connect()
    await client.bind(web_pod(), "n1")
    await client.create_event({"regarding": {"namespace": "team-a", "name": "web"}})
    await client.bind(web_pod(), "n2")
    assert len(server.requests) == 3
    assert server.connections == 1


async def test_a_connection_the_server_closes_or_left_idle_too_long_is_not_reused(
    server: RawServer, connect: Callable[[], KubeClusterClient], clock: FakeClock
) -> None:
    server.answers += [
        answer("201 Created", CREATED, "Connection: close"),
        answer("201 Created", CREATED),
        answer("201 Created", CREATED),
    ]
    client = connect()
    await client.bind(web_pod(), "n1")
    await client.bind(web_pod(), "n1")
    assert server.connections == 2
    clock.advance(KEEPALIVE_S)
    await client.bind(web_pod(), "n1")
    assert server.connections == 3


async def test_error_answers_become_the_ports_errors_and_retry_after_is_waited_out(
    server: RawServer, connect: Callable[[], KubeClusterClient], clock: FakeClock
) -> None:
    status = b'{"kind":"Status","code":429,"reason":"TooManyRequests","message":"slow down"}'
    conflict = b'{"kind":"Status","code":409,"reason":"Conflict","message":"already assigned"}'
    server.answers += [
        answer("429 Too Many Requests", status, "Retry-After: 3"),
        answer("201 Created", CREATED),
        chunked("409 Conflict", conflict),
    ]
    client = connect()
    creating = asyncio.create_task(
        client.create_event({"regarding": {"namespace": "team-a", "name": "web"}})
    )
    await until_sleeping(clock)
    # Sent again as client-go sends it: after the Retry-After the server asked for.
    assert clock.next_deadline() == clock.now() + 3
    clock.advance(3)
    await creating
    with pytest.raises(ConflictError, match="already assigned"):
        await client.bind(web_pod(), "n1")
    assert server.connections == 1


@pytest.mark.parametrize(
    "reply",
    [b"SPDY/3 200 OK\r\n\r\n", b"HTTP/1.1 201 Created\r\nContent-Length: 50\r\n\r\n{}", b""],
    ids=["not-http", "cut-short", "nothing"],
)
async def test_a_broken_answer_is_no_answer(
    reply: bytes, server: RawServer, connect: Callable[[], KubeClusterClient]
) -> None:
    # The server closes the connection after its last scripted answer, cutting it off there.
    server.answers.append(reply)
    with pytest.raises(APIError, match="no answer from the API server") as raised:
        await connect().create_event({"regarding": {"namespace": "team-a", "name": "web"}})
    assert raised.value.status == NO_RESPONSE
