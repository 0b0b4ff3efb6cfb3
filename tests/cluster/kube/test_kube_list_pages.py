"""Lists handed over page by page while the next page is fetched, and the informer storing
them as they come: the same store as one whole list, the continue token followed, and a 410
Expired on a continue token answered by one list in one piece."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING
from typing import Any

import pytest

from scheduler.cluster.informer import Informer
from scheduler.cluster.kube import KubeClusterClient
from scheduler.cluster.port import PagedLister
from scheduler.framework.errors import APIError
from scheduler.testing import FakeClock
from tests.cluster.kube.test_kube_client_reads import PODS
from tests.cluster.kube.test_kube_client_reads import page
from tests.cluster.kube.test_kube_client_reads import pod

if TYPE_CHECKING:
    from tests.cluster.kube.conftest import ClientFactory
    from tests.cluster.kube.conftest import FakeApiServer

POLL_DEADLINE_S = 5.0


async def until(condition: Callable[[], bool]) -> None:
    """Poll `condition` until it holds, failing after a deadline."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + POLL_DEADLINE_S
    while not condition():
        assert loop.time() < deadline, "condition not reached before the deadline"
        await asyncio.sleep(0.01)


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, str]] = []

    def informer(self, client: KubeClusterClient, clock: FakeClock) -> Informer:
        def name(obj: dict[str, Any]) -> str:
            return f"{obj['metadata']['name']}@{obj['metadata']['resourceVersion']}"

        return Informer(
            client,
            "pods",
            clock=clock,
            on_add=lambda obj: self.calls.append(("add", name(obj))),
            on_update=lambda old, new: self.calls.append(("update", f"{name(old)}>{name(new)}")),
            on_delete=lambda obj: self.calls.append(("delete", name(obj))),
        )


def stored(informer: Informer) -> dict[str, str]:
    return {o["metadata"]["name"]: o["metadata"]["resourceVersion"] for o in informer.store.list()}


def test_the_client_hands_lists_over_page_by_page(client: KubeClusterClient) -> None:
    assert isinstance(client, PagedLister)


async def test_the_next_page_is_requested_before_the_caller_asks_for_it(
    api: FakeApiServer, client: KubeClusterClient
) -> None:
    api.reply("GET", PODS, body=page([pod("a", "5")], "40", token="tok-1"))
    api.reply("GET", PODS, body=page([pod("b", "6")], "40"))
    pages = client.list_pages("pods")
    first = await anext(pages)
    assert [p["metadata"]["name"] for p in first.items] == ["a"]
    # Nothing more is asked of the generator: the second request goes out on its own.
    await until(lambda: len(api.requests) == 2)
    assert api.requests[1].query == {"limit": "500", "continue": "tok-1"}
    second = await anext(pages)
    assert [p["metadata"]["name"] for p in second.items] == ["b"]
    assert (second.resource_version, second.restarted) == ("40", False)
    with pytest.raises(StopAsyncIteration):
        await anext(pages)


async def test_closing_the_pages_early_abandons_the_request_in_flight(
    api: FakeApiServer, client: KubeClusterClient
) -> None:
    api.reply("GET", PODS, body=page([pod("a", "5")], "40", token="tok-1"))
    api.fail("GET", PODS, 500, "InternalError", "nobody reads this")
    pages = client.list_pages("pods")
    await anext(pages)
    await until(lambda: len(api.requests) == 2)
    await pages.aclose()
    assert len(api.requests) == 2


async def test_a_paged_list_stores_what_one_whole_list_stores(
    api: FakeApiServer, make_client: ClientFactory, clock: FakeClock
) -> None:
    objects = [pod(f"p{i}", str(10 + i)) for i in range(5)]
    whole = Recorder()
    api.reply("GET", PODS, body=page(objects, "40"))
    one_piece = whole.informer(make_client(), clock)
    await one_piece.list_and_replace()

    paged = Recorder()
    api.reply("GET", PODS, body=page(objects[:2], "40", token="tok-1"))
    api.reply("GET", PODS, body=page(objects[2:4], "40", token="tok-2"))
    api.reply("GET", PODS, body=page(objects[4:], "40"))
    in_pages = paged.informer(make_client(), clock)
    await in_pages.list_and_replace()

    assert stored(in_pages) == stored(one_piece)
    assert paged.calls == whole.calls == [("add", f"p{i}@{10 + i}") for i in range(5)]
    assert in_pages.resource_version == one_piece.resource_version == "40"
    assert in_pages.has_synced
    assert [r.query.get("continue") for r in api.requests[1:]] == [None, "tok-1", "tok-2"]


async def test_an_expired_continue_token_relists_in_one_piece_and_drops_the_void_pages(
    api: FakeApiServer, make_client: ClientFactory, clock: FakeClock
) -> None:
    recorder = Recorder()
    api.reply("GET", PODS, body=page([pod("a", "5"), pod("b", "6")], "40", token="tok-1"))
    api.fail("GET", PODS, 410, "Expired", "The provided continue parameter is too old")
    api.reply("GET", PODS, body=page([pod("b", "7"), pod("z", "60")], "61"))
    informer = recorder.informer(make_client(), clock)
    await informer.list_and_replace()

    assert stored(informer) == {"b": "7", "z": "60"}
    assert recorder.calls == [
        ("add", "a@5"),
        ("add", "b@6"),
        ("update", "b@6>b@7"),
        ("add", "z@60"),
        ("delete", "a@5"),
    ]
    assert informer.resource_version == "61"
    assert informer.has_synced
    assert api.requests[-1].query == {}


async def test_a_page_that_fails_leaves_the_informer_unsynced(
    api: FakeApiServer, make_client: ClientFactory, clock: FakeClock
) -> None:
    api.reply("GET", PODS, body=page([pod("a", "5")], "40", token="tok-1"))
    api.fail("GET", PODS, 500, "InternalError", "etcd is away")
    informer = Recorder().informer(make_client(), clock)
    with pytest.raises(APIError, match="etcd is away"):
        await informer.list_and_replace()
    assert not informer.has_synced
