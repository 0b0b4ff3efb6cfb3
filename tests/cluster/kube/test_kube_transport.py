"""The HTTP layer: rate limiting of real requests, closing, and requests with no answer."""

from __future__ import annotations

import asyncio
import json
import socket
from types import MappingProxyType
from typing import TYPE_CHECKING

import pytest
from kubernetes_asyncio.client import Configuration

from scheduler.cluster.kube import KubeClusterClient
from scheduler.cluster.kube import new_client
from scheduler.cluster.kube.config import DEFAULT_POOL_SIZE
from scheduler.cluster.kube.errors import NO_RESPONSE
from scheduler.cluster.kube.transport import encode_body
from scheduler.cluster.send_gate import gated
from scheduler.framework.errors import APIError
from scheduler.testing import FakeClock
from tests.cluster.kube.conftest import until_sleeping

if TYPE_CHECKING:
    from tests.cluster.kube.conftest import ClientFactory
    from tests.cluster.kube.conftest import FakeApiServer

NODE = "/api/v1/nodes/n1"


def one_request_a_second(api: FakeApiServer, make_client: ClientFactory) -> KubeClusterClient:
    """A client limited to one request a second, and two answers for GETs of node n1."""
    for _ in range(2):
        api.reply("GET", NODE, body={"kind": "Node"})
    return make_client(qps=1, burst=1)


async def test_requests_wait_for_the_rate_limiter(
    api: FakeApiServer, make_client: ClientFactory, clock: FakeClock
) -> None:
    client = one_request_a_second(api, make_client)
    first = asyncio.create_task(client.get("nodes", "", "n1"))
    second = asyncio.create_task(client.get("nodes", "", "n1"))
    await first
    for _ in range(20):
        await asyncio.sleep(0)
    assert len(api.requests) == 1
    assert not second.done()
    clock.advance(1.0)
    await second
    assert len(api.requests) == 2


async def test_close_ends_an_open_watch_quietly(
    api: FakeApiServer, client: KubeClusterClient
) -> None:
    added = {"type": "ADDED", "object": {"metadata": {"name": "a", "resourceVersion": "2"}}}
    api.stream("/api/v1/pods", api.lines(added), hold=True)
    first_event = asyncio.Event()
    seen: list[str] = []

    async def consume() -> None:
        async for event in client.watch("pods", resource_version="1"):
            seen.append(event.type)
            first_event.set()

    watching = asyncio.create_task(consume())
    await asyncio.wait_for(first_event.wait(), timeout=10)
    await client.close()
    # A bound on a broken implementation, not a synchronisation: the task ends on close.
    await asyncio.wait_for(watching, timeout=10)
    assert seen == ["ADDED"]


async def test_requests_after_close_fail_without_sending(
    api: FakeApiServer, client: KubeClusterClient
) -> None:
    await client.close()
    with pytest.raises(APIError, match="closed") as raised:
        await client.get("nodes", "", "n1")
    assert raised.value.status == NO_RESPONSE
    assert api.requests == []


def unused_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


async def test_no_answer_is_an_api_error_without_status(clock: FakeClock) -> None:
    configuration = Configuration(host=f"http://127.0.0.1:{unused_port()}")
    client = new_client(configuration, qps=-1, burst=1, user_agent="t", clock=clock)
    try:
        with pytest.raises(APIError, match="no answer from the API server") as raised:
            await client.get("nodes", "", "n1")
        assert raised.value.status == NO_RESPONSE
        assert raised.value.connection_refused
    finally:
        await client.close()


@pytest.mark.parametrize("burst", [10, 100, 5000])
async def test_the_connection_pool_is_bounded_whatever_the_burst(
    burst: int, clock: FakeClock
) -> None:
    configuration = Configuration(host="http://127.0.0.1:1")
    client = new_client(configuration, qps=50, burst=burst, user_agent="t", clock=clock)
    try:
        assert client.connection_limit == DEFAULT_POOL_SIZE
    finally:
        await client.close()


async def test_each_client_gets_its_own_pool_and_leaves_the_configuration_alone(
    clock: FakeClock,
) -> None:
    configuration = Configuration(host="http://127.0.0.1:1")
    before = configuration.connection_pool_maxsize
    small = new_client(configuration, qps=50, burst=100, user_agent="t", clock=clock, pool_size=2)
    large = new_client(configuration, qps=50, burst=100, user_agent="t", clock=clock)
    try:
        assert (small.connection_limit, large.connection_limit) == (2, DEFAULT_POOL_SIZE)
        assert configuration.connection_pool_maxsize == before
    finally:
        await small.close()
        await large.close()


async def test_an_observer_hears_each_wait_request_and_answer_size(
    api: FakeApiServer, make_client: ClientFactory, clock: FakeClock
) -> None:
    heard: list[tuple[object, ...]] = []

    class Observer:
        def rate_limited(self, method: str, host: str, seconds: float) -> None:
            heard.append(("waited", method, host, seconds))

        def request(self, method: str, host: str, code: int, seconds: float, *, sent: int) -> None:
            heard.append(("request", method, host, code, sent))

        def response_size(self, method: str, host: str, received: int) -> None:
            heard.append(("received", method, host, received))

    client = make_client(qps=1, burst=1)
    client.observe_requests(Observer())
    host = api.url.removeprefix("http://")
    api.reply("GET", NODE, body={"kind": "Node"})
    api.fail("POST", "/api/v1/nodes", 409, "AlreadyExists", "exists")
    await client.get("nodes", "", "n1")
    creating = asyncio.create_task(client.create("nodes", {"metadata": {"name": "n1"}}))
    for _ in range(20):
        await asyncio.sleep(0)
    clock.advance(1.0)
    with pytest.raises(APIError):
        await creating

    # The size is what went on the wire: the body as the server received it.
    (posted,) = [r for r in api.requests if r.method == "POST"]
    body = int(posted.headers["Content-Length"])
    assert body == len(b'{"metadata":{"name":"n1"},"apiVersion":"v1","kind":"Node"}')
    assert heard[:3] == [
        ("waited", "GET", host, 0.0),
        ("request", "GET", host, 200, 0),
        ("received", "GET", host, len(b'{"kind": "Node"}')),
    ]
    assert heard[3] == ("waited", "POST", host, 1.0)
    assert heard[4] == ("request", "POST", host, 409, body)


async def test_requests_beyond_the_pool_wait_for_a_connection_rather_than_fail(
    api: FakeApiServer, clock: FakeClock
) -> None:
    configuration = Configuration(host=api.url)
    client = new_client(configuration, qps=-1, burst=100, user_agent="t", clock=clock, pool_size=1)
    for _ in range(3):
        api.reply("GET", NODE, body={"kind": "Node"})
    try:
        answers = await asyncio.gather(*(client.get("nodes", "", "n1") for _ in range(3)))
    finally:
        await client.close()
    assert answers == [{"kind": "Node"}] * 3
    assert len([r for r in api.requests if r.method == "GET"]) == 3


async def test_the_send_gate_is_asked_once_a_connection_is_free_not_before(
    api: FakeApiServer, clock: FakeClock
) -> None:
    configuration = Configuration(host=api.url)
    client = new_client(configuration, qps=-1, burst=100, user_agent="t", clock=clock, pool_size=1)
    added = {"type": "ADDED", "object": {"metadata": {"name": "a", "resourceVersion": "2"}}}
    api.stream("/api/v1/pods", api.lines(added), hold=True)
    api.reply("GET", NODE, body={"kind": "Node"})
    asked: list[str] = []
    watching = client.watch("pods", resource_version="1")
    try:
        # The watch holds the only connection.
        assert (await anext(watching)).type == "ADDED"
        with gated(asked.append):
            getting = asyncio.create_task(client.get("nodes", "", "n1"))
        for _ in range(20):
            await asyncio.sleep(0)
        assert asked == []
        api.release_streams()
        # The watch ends, and its connection goes back to the pool.
        assert [event async for event in watching] == []
        # A bound on a broken implementation, not a synchronisation.
        assert await asyncio.wait_for(getting, timeout=10) == {"kind": "Node"}
        assert asked == ["GET"]
    finally:
        await watching.aclose()
        await client.close()


def test_bodies_are_encoded_as_they_are_or_made_plain_first() -> None:
    plain = {"metadata": {"name": "web"}, "items": [1, "a", None]}
    assert json.loads(encode_body(plain)) == plain
    # Another kind of mapping, a tuple, and a key that is not a string: made plain.
    unusual = MappingProxyType({"target": MappingProxyType({1: ("n1",)})})
    assert json.loads(encode_body(unusual)) == {"target": {"1": ["n1"]}}


async def test_a_retry_after_answer_is_sent_again_after_those_seconds(
    api: FakeApiServer, client: KubeClusterClient, clock: FakeClock
) -> None:
    """As client-go: 429 and 5xx answers that say Retry-After are tried again, after it."""
    api.fail("GET", NODE, 429, "TooManyRequests", "slow down", {"Retry-After": "2"})
    api.fail("GET", NODE, 503, "ServiceUnavailable", "restarting", {"Retry-After": "1"})
    api.reply("GET", NODE, 200, {"kind": "Node", "metadata": {"name": "n1"}})
    answer = asyncio.create_task(client.get("nodes", "", "n1"))
    await until_sleeping(clock)
    assert clock.next_deadline() == clock.now() + 2
    clock.advance(2)
    await until_sleeping(clock)
    clock.advance(1)
    assert (await answer)["metadata"]["name"] == "n1"
    assert len(api.requests) == 3


@pytest.mark.parametrize(
    ("code", "headers"),
    [(503, {}), (404, {"Retry-After": "1"}), (409, {"Retry-After": "1"})],
    ids=["5xx-without-retry-after", "not-found", "conflict"],
)
async def test_other_errors_are_not_sent_again(
    api: FakeApiServer,
    client: KubeClusterClient,
    clock: FakeClock,
    code: int,
    headers: dict[str, str],
) -> None:
    api.fail("DELETE", NODE, code, "Reason", "no", headers)
    with pytest.raises(APIError) as failed:
        await client.delete("nodes", "", "n1")
    assert failed.value.status == code
    assert len(api.requests) == 1
    assert clock.pending_timers == 0


async def test_retry_after_is_honoured_ten_times_then_the_error_stands(
    api: FakeApiServer, client: KubeClusterClient, clock: FakeClock
) -> None:
    for _ in range(11):
        api.fail("DELETE", NODE, 429, "TooManyRequests", "slow down", {"Retry-After": "1"})
    deleting = asyncio.create_task(client.delete("nodes", "", "n1"))
    for _ in range(10):
        await until_sleeping(clock)
        clock.advance(1)
    with pytest.raises(APIError) as failed:
        await deleting
    assert failed.value.status == 429
    assert len(api.requests) == 11


async def test_a_watch_does_not_wait_for_the_rate_limiter(
    api: FakeApiServer, make_client: ClientFactory, clock: FakeClock
) -> None:
    # As client-go: a watch reconnecting must not queue behind a burst of writes.
    client = one_request_a_second(api, make_client)
    added = {"type": "ADDED", "object": {"metadata": {"name": "a", "resourceVersion": "2"}}}
    api.stream("/api/v1/pods", api.lines(added))
    await client.get("nodes", "", "n1")  # the one token is spent
    queued = asyncio.create_task(client.get("nodes", "", "n1"))

    async def watch() -> list[str]:
        return [event.type async for event in client.watch("pods", resource_version="1")]

    # A bound on a broken implementation, not a synchronisation: the fake clock never moves.
    seen = await asyncio.wait_for(watch(), timeout=10)
    assert seen == ["ADDED"]
    assert not queued.done()  # the GET still waits for its token; the watch did not
    clock.advance(1.0)
    await queued
