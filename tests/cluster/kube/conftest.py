"""A scripted API server on 127.0.0.1 for the kube adapter's tests.

Tests queue canned answers per (method, path); the server records every request it receives
(method, path, query, headers, JSON body) and answers in order. Anything unscripted gets a 404
Status, as a real server answers for an object it does not have. Streaming answers (watches)
are written chunk by chunk, optionally held open until the test or teardown releases them.
"""

from __future__ import annotations

import asyncio
import json
from collections import defaultdict
from collections import deque
from collections.abc import AsyncIterator
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from typing import Any

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer
from kubernetes_asyncio.client import Configuration

from scheduler.cluster.kube import KubeClusterClient
from scheduler.cluster.kube import new_client
from scheduler.testing import FakeClock


async def until_sleeping(clock: FakeClock) -> None:
    """Until a request under test waits on the clock (its answers travel over loopback, so
    the loop needs turns to carry them)."""
    for _ in range(10_000):
        if clock.pending_timers:
            return
        await asyncio.sleep(0)
    raise AssertionError("the request never waited on the clock")


@dataclass(frozen=True)
class Recorded:
    method: str
    path: str
    query: dict[str, str]
    headers: Mapping[str, str]
    body: Any


@dataclass
class Canned:
    status: int = 200
    body: Any = None
    # A streaming answer: these byte chunks, written one by one.
    chunks: list[bytes] | None = None
    # Keep a streaming answer open after its chunks until released.
    hold: bool = False
    headers: Mapping[str, str] = field(default_factory=dict)


def status_body(code: int, reason: str, message: str) -> dict[str, Any]:
    return {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }


@dataclass
class FakeApiServer:
    requests: list[Recorded] = field(default_factory=list)
    _canned: dict[tuple[str, str], deque[Canned]] = field(
        default_factory=lambda: defaultdict(deque)
    )
    _release: asyncio.Event = field(default_factory=asyncio.Event)
    _server: TestServer | None = None

    async def start(self) -> None:
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._server = TestServer(app, host="127.0.0.1")
        await self._server.start_server()

    async def close(self) -> None:
        self._release.set()
        if self._server is not None:
            await self._server.close()

    @property
    def url(self) -> str:
        assert self._server is not None
        return str(self._server.make_url("")).rstrip("/")

    def reply(
        self,
        method: str,
        path: str,
        status: int = 200,
        body: Any = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self._canned[(method, path)].append(Canned(status, body, headers=headers or {}))

    def fail(
        self,
        method: str,
        path: str,
        code: int,
        reason: str,
        message: str,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        self.reply(method, path, code, status_body(code, reason, message), headers)

    def stream(self, path: str, *chunks: bytes, hold: bool = False) -> None:
        self._canned[("GET", path)].append(Canned(chunks=list(chunks), hold=hold))

    @staticmethod
    def lines(*events: Mapping[str, Any]) -> bytes:
        """Watch events as the server frames them: one JSON document per line."""
        return b"".join(json.dumps(event).encode() + b"\n" for event in events)

    def release_streams(self) -> None:
        self._release.set()

    def only(self, method: str | None = None) -> Recorded:
        matching = [r for r in self.requests if method is None or r.method == method]
        assert len(matching) == 1, matching
        return matching[0]

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        raw = await request.read()
        self.requests.append(
            Recorded(
                request.method,
                request.path,
                dict(request.query),
                request.headers.copy(),
                json.loads(raw) if raw else None,
            )
        )
        queue = self._canned.get((request.method, request.path))
        if not queue:
            return web.json_response(
                status_body(404, "NotFound", f"nothing scripted for {request.path}"), status=404
            )
        canned = queue.popleft()
        if canned.chunks is None:
            if canned.body is None:
                return web.Response(status=canned.status, headers=canned.headers)
            if isinstance(canned.body, bytes):  # not JSON: what a misbehaving proxy sends
                return web.Response(body=canned.body, status=canned.status, headers=canned.headers)
            return web.json_response(canned.body, status=canned.status, headers=canned.headers)
        response = web.StreamResponse(status=canned.status)
        response.content_type = "application/json"
        await response.prepare(request)
        for chunk in canned.chunks:
            await response.write(chunk)
        if canned.hold:
            await self._release.wait()
        await response.write_eof()
        return response


class ClientFactory:
    """Builds clients of the fake server (closed at teardown)."""

    def __init__(self, api: FakeApiServer, clock: FakeClock) -> None:
        self._api = api
        self._clock = clock
        self.made: list[KubeClusterClient] = []

    def __call__(
        self, *, qps: float = -1, burst: int = 100, token: str | None = None
    ) -> KubeClusterClient:
        configuration = Configuration(host=self._api.url)
        if token is not None:
            configuration.api_key["BearerToken"] = f"Bearer {token}"
        made = new_client(
            configuration,
            qps=qps,
            burst=burst,
            user_agent="kube-pyscheduler/9.9.9",
            clock=self._clock,
        )
        self.made.append(made)
        return made


@pytest.fixture
async def api() -> AsyncIterator[FakeApiServer]:
    server = FakeApiServer()
    await server.start()
    yield server
    await server.close()


@pytest.fixture
async def make_client(api: FakeApiServer, clock: FakeClock) -> AsyncIterator[ClientFactory]:
    factory = ClientFactory(api, clock)
    yield factory
    for made in factory.made:
        await made.close()


@pytest.fixture
async def client(make_client: ClientFactory) -> KubeClusterClient:
    return make_client()
