"""List, watch and get over real HTTP against the scripted server, and the informer on top."""

from __future__ import annotations

from typing import TYPE_CHECKING
from typing import Any

import pytest

from scheduler.cluster.informer import Informer
from scheduler.cluster.kube import KubeClusterClient
from scheduler.cluster.port import ClusterClient
from scheduler.cluster.port import WatchEvent
from scheduler.framework.errors import APIError
from scheduler.framework.errors import GoneError
from scheduler.framework.errors import NotFoundError
from scheduler.testing import FakeClock

if TYPE_CHECKING:
    from tests.cluster.kube.conftest import FakeApiServer

PODS = "/api/v1/pods"


def pod(name: str, version: str, namespace: str = "default") -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": namespace, "resourceVersion": version}}


def page(items: list[dict[str, Any]], version: str, token: str = "") -> dict[str, Any]:
    meta = {"resourceVersion": version, **({"continue": token} if token else {})}
    return {"kind": "PodList", "apiVersion": "v1", "metadata": meta, "items": items}


def event(kind: str, obj: dict[str, Any]) -> dict[str, Any]:
    return {"type": kind, "object": obj}


async def drain(client: ClusterClient, version: str, selector: str | None = None) -> list[Any]:
    stream = client.watch("pods", resource_version=version, field_selector=selector)
    return [(e.type, e.resource_version) async for e in stream]


def test_the_client_satisfies_the_port(client: KubeClusterClient) -> None:
    port: ClusterClient = client
    assert port is client


async def test_list_pages_through_the_collection(
    api: FakeApiServer, client: KubeClusterClient
) -> None:
    api.reply("GET", PODS, body=page([pod("a", "5"), pod("b", "6")], "40", token="tok-1"))
    api.reply("GET", PODS, body=page([pod("c", "7")], "40"))
    listed = await client.list("pods", field_selector="spec.nodeName=")
    assert [p["metadata"]["name"] for p in listed.items] == ["a", "b", "c"]
    assert listed.resource_version == "40"
    # Items of a list carry no type fields on the wire; the client restores them.
    assert {(p["apiVersion"], p["kind"]) for p in listed.items} == {("v1", "Pod")}
    first, second = (r.query for r in api.requests)
    assert first == {"limit": "500", "fieldSelector": "spec.nodeName="}
    assert second == {"limit": "500", "fieldSelector": "spec.nodeName=", "continue": "tok-1"}


async def test_list_in_a_namespace_uses_the_namespaced_path(
    api: FakeApiServer, client: KubeClusterClient
) -> None:
    path = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"
    api.reply("GET", path, body=page([], "9"))
    listed = await client.list("leases", namespace="kube-system")
    assert listed.items == []
    assert listed.resource_version == "9"
    assert api.only().path == path


async def test_an_expired_continue_token_falls_back_to_one_full_list(
    api: FakeApiServer, client: KubeClusterClient
) -> None:
    api.reply("GET", PODS, body=page([pod("a", "5")], "40", token="tok-1"))
    api.fail("GET", PODS, 410, "Expired", "The provided continue parameter is too old")
    api.reply("GET", PODS, body=page([pod("a", "5"), pod("z", "60")], "61"))
    listed = await client.list("pods", field_selector="status.phase!=Failed")
    assert [p["metadata"]["name"] for p in listed.items] == ["a", "z"]
    assert listed.resource_version == "61"
    assert api.requests[-1].query == {"fieldSelector": "status.phase!=Failed"}


async def test_a_first_page_that_is_gone_raises(
    api: FakeApiServer, client: KubeClusterClient
) -> None:
    api.fail("GET", PODS, 410, "Expired", "too old")
    with pytest.raises(GoneError):
        await client.list("pods")


async def test_watch_streams_raw_events_with_the_right_query(
    api: FakeApiServer, client: KubeClusterClient
) -> None:
    bookmark = {"kind": "Pod", "apiVersion": "v1", "metadata": {"resourceVersion": "44"}}
    api.stream(
        PODS,
        api.lines(event("ADDED", pod("a", "41")), event("MODIFIED", pod("a", "42"))),
        # One event split across writes, the way a large object arrives.
        b'{"type":"DELETED","object":{"metadata":{"name":"a","resourceVer',
        b'sion":"43"}}}\n',
        api.lines(event("BOOKMARK", bookmark)),
    )
    seen = await drain(client, "40", "spec.schedulerName=mine")
    assert seen == [("ADDED", "41"), ("MODIFIED", "42"), ("DELETED", "43"), ("BOOKMARK", "44")]
    assert api.only().query == {
        "watch": "1",
        "resourceVersion": "40",
        "allowWatchBookmarks": "true",
        "fieldSelector": "spec.schedulerName=mine",
        "timeoutSeconds": "30",
    }


async def test_watch_from_any_version_sends_no_resource_version(
    api: FakeApiServer, client: KubeClusterClient
) -> None:
    api.stream(PODS, api.lines(event("ADDED", pod("a", "41"))))
    stream = client.watch("pods", resource_version="", allow_bookmarks=False)
    assert [e.type async for e in stream] == ["ADDED"]
    assert api.only().query == {"watch": "1", "timeoutSeconds": "30"}


async def test_an_expired_watch_event_raises_gone_after_earlier_events(
    api: FakeApiServer, client: KubeClusterClient
) -> None:
    expired = {"kind": "Status", "code": 410, "reason": "Expired", "message": "too old: 3 (40)"}
    api.stream(PODS, api.lines(event("ADDED", pod("a", "41")), event("ERROR", expired)))
    seen: list[WatchEvent] = []
    with pytest.raises(GoneError, match=r"too old: 3 \(40\)"):
        async for e in client.watch("pods", resource_version="3"):
            seen.append(e)
    assert [e.type for e in seen] == ["ADDED"]


@pytest.mark.parametrize(
    ("code", "reason", "expected"),
    [(410, "Gone", GoneError), (403, "Forbidden", APIError), (404, "NotFound", NotFoundError)],
    ids=["410", "403", "404"],
)
async def test_a_refused_watch_raises_by_status(
    api: FakeApiServer,
    client: KubeClusterClient,
    code: int,
    reason: str,
    expected: type[APIError],
) -> None:
    api.fail("GET", PODS, code, reason, "refused")
    with pytest.raises(expected) as raised:
        await drain(client, "3")
    assert raised.value.status == code


async def test_get_returns_the_object_or_not_found(
    api: FakeApiServer, client: KubeClusterClient
) -> None:
    api.reply("GET", "/api/v1/nodes/n1", body={"kind": "Node", "metadata": {"name": "n1"}})
    assert (await client.get("nodes", "", "n1"))["metadata"]["name"] == "n1"
    api.fail("GET", "/api/v1/namespaces/a/pods/web", 404, "NotFound", 'pods "web" not found')
    with pytest.raises(NotFoundError, match='pods "web" not found'):
        await client.get("pods", "a", "web")


async def test_an_answer_that_is_not_json_is_an_api_error(
    api: FakeApiServer, client: KubeClusterClient
) -> None:
    # A proxy in front of the API server answering 200 with a page of its own: callers retry
    # an API error (the elector's next attempt, the informer's next list), as client-go's do.
    path = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler"
    api.reply("GET", path, body=b"<html>maintenance</html>")
    with pytest.raises(APIError, match=f"GET {path}: the answer is not JSON"):
        await client.get("leases", "kube-system", "kube-scheduler")


async def test_an_unknown_resource_is_refused_before_any_request(
    api: FakeApiServer, client: KubeClusterClient
) -> None:
    with pytest.raises(NotFoundError):
        await client.list("widgets")
    assert api.requests == []


async def test_informer_lists_watches_from_the_list_version_and_relists_on_gone(
    api: FakeApiServer, client: KubeClusterClient, clock: FakeClock
) -> None:
    added: list[str] = []
    deleted: list[str] = []
    informer = Informer(
        client,
        "pods",
        clock=clock,
        field_selector="spec.nodeName=",
        on_add=lambda obj: added.append(obj["metadata"]["name"]),
        on_delete=lambda obj: deleted.append(obj["metadata"]["name"]),
    )
    expired = {"kind": "Status", "code": 410, "reason": "Expired", "message": "too old"}
    api.reply("GET", PODS, body=page([pod("a", "5")], "10"))
    api.stream(PODS, api.lines(event("ADDED", pod("b", "11")), event("ERROR", expired)))
    api.reply("GET", PODS, body=page([pod("b", "11"), pod("c", "19")], "20"))
    api.stream(PODS)

    await informer.list_and_replace()
    with pytest.raises(GoneError):
        await informer.watch_until_closed()
    await informer.list_and_replace()
    await informer.watch_until_closed()

    assert added == ["a", "b", "c"]
    assert deleted == ["a"]
    watches = [r.query for r in api.requests if "watch" in r.query]
    assert [w["resourceVersion"] for w in watches] == ["10", "20"]
    assert all(w["fieldSelector"] == "spec.nodeName=" for w in watches)
    assert sorted(o["metadata"]["name"] for o in informer.store.list()) == ["b", "c"]
