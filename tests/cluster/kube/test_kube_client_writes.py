"""Writes over real HTTP against the scripted server: paths, content types, bodies, errors."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING
from typing import Any

import pytest

from scheduler.cluster.kube import KubeClusterClient
from scheduler.cluster.kube import transport
from scheduler.framework.errors import APIError
from scheduler.framework.errors import ConflictError
from scheduler.framework.errors import NotFoundError
from scheduler.objects.pod import Pod
from scheduler.testing import FakeClock
from scheduler.testing import make_pod
from tests.cluster.kube.conftest import until_sleeping

if TYPE_CHECKING:
    from tests.cluster.kube.conftest import ClientFactory
    from tests.cluster.kube.conftest import FakeApiServer

CREATED = {"kind": "Status", "apiVersion": "v1", "status": "Success", "code": 201}


def pending_pod(name: str = "web", namespace: str = "team-a", uid: str = "uid-1") -> Pod:
    raw = make_pod(name).dict()
    raw["metadata"].update({"namespace": namespace, "uid": uid})
    return Pod.from_dict(raw)


def binding_path(name: str = "web", namespace: str = "team-a") -> str:
    return f"/api/v1/namespaces/{namespace}/pods/{name}/binding"


async def test_bind_posts_a_binding_with_the_pod_uid(
    api: FakeApiServer, client: KubeClusterClient
) -> None:
    # The server answers a binding with a Status, which the client must not try to decode as
    # a Binding.
    api.reply("POST", binding_path(), 201, CREATED)
    await client.bind(pending_pod(), "n1")
    request = api.only()
    assert request.path == binding_path()
    assert request.headers["Content-Type"] == "application/json"
    assert request.body == {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "web", "namespace": "team-a", "uid": "uid-1"},
        "target": {"apiVersion": "v1", "kind": "Node", "name": "n1"},
    }


@pytest.mark.parametrize(
    ("code", "reason", "message", "expected"),
    [
        (409, "Conflict", 'pod web is already assigned to node "n1"', ConflictError),
        (404, "NotFound", 'pods "web" not found', NotFoundError),
        # The pod was deleted and another created under its name: gone, for the port.
        (
            409,
            "Conflict",
            'Operation cannot be fulfilled on Pod "web": the UID in the precondition (uid-1)'
            " does not match the UID in record (uid-2). The object might have been deleted and"
            " then recreated",
            NotFoundError,
        ),
        (500, "InternalError", "etcdserver: request timed out", APIError),
    ],
    ids=["already-bound", "deleted", "recreated", "server-error"],
)
async def test_bind_failures_map_to_port_errors(
    api: FakeApiServer,
    client: KubeClusterClient,
    code: int,
    reason: str,
    message: str,
    expected: type[APIError],
) -> None:
    api.fail("POST", binding_path(), code, reason, message)
    with pytest.raises(expected) as raised:
        await client.bind(pending_pod(), "n2")
    assert raised.value.text == message


@pytest.mark.parametrize("node", ["n1", "elsewhere"])
async def test_a_binding_answered_with_a_server_error_counts_if_the_pod_is_bound_to_our_node(
    api: FakeApiServer, client: KubeClusterClient, node: str
) -> None:
    # The server made the Binding but its answer was a timeout; the pod now names a node.
    api.fail("POST", binding_path(), 504, "Timeout", "the server was unable to respond in time")
    bound = make_pod("web").dict()
    bound["metadata"].update({"namespace": "team-a", "uid": "uid-1"})
    bound["spec"]["nodeName"] = node
    api.reply("GET", "/api/v1/namespaces/team-a/pods/web", body=bound)
    if node == "n1":
        await client.bind(pending_pod(), "n1")
    else:
        with pytest.raises(APIError) as raised:
            await client.bind(pending_pod(), "n1")
        assert raised.value.status == 504
    assert [r.method for r in api.requests] == ["POST", "GET"]


async def test_an_uncertain_binding_is_settled_once_the_server_answers_again(
    api: FakeApiServer, client: KubeClusterClient, clock: FakeClock
) -> None:
    # The server went away mid-binding and answers nothing for a while after.
    api.fail("POST", binding_path(), 503, "ServiceUnavailable", "shutting down")
    api.fail("GET", "/api/v1/namespaces/team-a/pods/web", 503, "ServiceUnavailable", "down")
    api.fail("GET", "/api/v1/namespaces/team-a/pods/web", 503, "ServiceUnavailable", "down")
    bound = make_pod("web").dict()
    bound["metadata"].update({"namespace": "team-a", "uid": "uid-1"})
    bound["spec"]["nodeName"] = "n1"
    api.reply("GET", "/api/v1/namespaces/team-a/pods/web", body=bound)
    binding = asyncio.create_task(client.bind(pending_pod(), "n1"))
    for delay in (0.5, 1.0):
        # The client waits (on the clock) before asking again.
        for _ in range(10_000):
            if clock.pending_timers:
                break
            await asyncio.sleep(0)
        assert not binding.done()  # still asking; the pod keeps its place meanwhile
        clock.advance(delay)
    await asyncio.wait_for(binding, 5)
    assert [r.method for r in api.requests] == ["POST", "GET", "GET", "GET"]


async def test_many_concurrent_binds_share_one_client(
    api: FakeApiServer, client: KubeClusterClient
) -> None:
    pods = [pending_pod(f"p{i}", uid=f"u{i}") for i in range(64)]
    for p in pods:
        api.reply("POST", binding_path(p.name), 201, CREATED)
    await asyncio.gather(*(client.bind(p, f"n{i % 4}") for i, p in enumerate(pods)))
    bound = {r.body["metadata"]["name"]: r.body["target"]["name"] for r in api.requests}
    assert bound == {f"p{i}": f"n{i % 4}" for i in range(64)}


@pytest.mark.parametrize(
    "patch",
    [
        {"conditions": [{"type": "PodScheduled", "status": "False"}], "nominatedNodeName": None},
        {"status": {"conditions": [{"type": "PodScheduled", "status": "False"}],
                    "nominatedNodeName": None}},
    ],
    ids=["status-fields", "status-wrapped"],
)  # fmt: skip
async def test_patch_pod_status_is_a_strategic_merge_patch_of_the_status_subresource(
    api: FakeApiServer, client: KubeClusterClient, patch: dict[str, Any]
) -> None:
    path = "/api/v1/namespaces/team-a/pods/web/status"
    api.reply("PATCH", path, body={"kind": "Pod"})
    await client.patch_pod_status("team-a", "web", patch)
    request = api.only()
    assert request.path == path
    assert request.headers["Content-Type"] == "application/strategic-merge-patch+json"
    assert request.body == {
        "status": {
            "conditions": [{"type": "PodScheduled", "status": "False"}],
            "nominatedNodeName": None,
        }
    }


async def test_a_pod_status_patch_is_tried_again_on_errors_a_moment_may_clear(
    api: FakeApiServer, client: KubeClusterClient, clock: FakeClock
) -> None:
    """As kube-scheduler's PatchPodStatus: four tries, 10, 50 and 250 ms apart, on an internal
    error, an unavailable server or a conflict."""
    path = "/api/v1/namespaces/team-a/pods/web/status"
    api.fail("PATCH", path, 500, "InternalError", "etcd hiccup")
    api.fail("PATCH", path, 503, "ServiceUnavailable", "restarting")
    api.fail("PATCH", path, 409, "Conflict", "the object has been modified")
    api.reply("PATCH", path, body={"kind": "Pod"})
    patching = asyncio.create_task(client.patch_pod_status("team-a", "web", {"conditions": []}))
    waits = []
    for _ in range(3):
        await until_sleeping(clock)
        deadline = clock.next_deadline()
        assert deadline is not None
        waits.append(round(deadline - clock.now(), 3))
        clock.advance(deadline - clock.now())
    await patching
    assert waits == [0.01, 0.05, 0.25]
    assert len(api.requests) == 4


async def test_a_pod_status_patch_gives_up_after_four_tries_and_at_once_on_other_errors(
    api: FakeApiServer, client: KubeClusterClient, clock: FakeClock
) -> None:
    path = "/api/v1/namespaces/team-a/pods/web/status"
    for _ in range(4):
        api.fail("PATCH", path, 500, "InternalError", "etcd down")
    patching = asyncio.create_task(client.patch_pod_status("team-a", "web", {"conditions": []}))
    for _ in range(3):
        await until_sleeping(clock)
        clock.advance(1)
    with pytest.raises(APIError, match="etcd down"):
        await patching
    assert len(api.requests) == 4
    api.fail("PATCH", path, 422, "Invalid", "bad condition")
    with pytest.raises(APIError, match="bad condition"):
        await client.patch_pod_status("team-a", "web", {"conditions": []})
    assert len(api.requests) == 5 and clock.pending_timers == 0


async def test_patch_object_is_a_merge_patch(api: FakeApiServer, client: KubeClusterClient) -> None:
    path = "/api/v1/persistentvolumeclaims/x"  # never requested: PVCs are namespaced
    pvc = "/api/v1/namespaces/a/persistentvolumeclaims/data"
    api.reply("PATCH", pvc, body={"kind": "PersistentVolumeClaim"})
    patch = {"metadata": {"annotations": {"volume.kubernetes.io/selected-node": "n1"}}}
    await client.patch_object("persistentvolumeclaims", "a", "data", patch)
    request = api.only()
    assert request.path == pvc != path
    assert request.headers["Content-Type"] == "application/merge-patch+json"
    assert request.body == patch


async def test_a_stale_merge_patch_conflicts(api: FakeApiServer, client: KubeClusterClient) -> None:
    api.fail("PATCH", "/api/v1/nodes/n1", 409, "Conflict", "the object has been modified")
    with pytest.raises(ConflictError, match="the object has been modified"):
        await client.patch_object("nodes", "", "n1", {"metadata": {"resourceVersion": "3"}})


async def test_delete_pod_sends_a_uid_precondition_and_grace_period(
    api: FakeApiServer, client: KubeClusterClient
) -> None:
    path = "/api/v1/namespaces/a/pods/victim"
    api.reply("DELETE", path, body={"kind": "Pod"})
    await client.delete_pod("a", "victim", "uid-9", grace_period_seconds=0)
    request = api.only()
    assert request.path == path
    assert request.body == {
        "apiVersion": "v1",
        "kind": "DeleteOptions",
        "preconditions": {"uid": "uid-9"},
        "gracePeriodSeconds": 0,
    }


async def test_delete_pod_of_a_replaced_pod_conflicts(
    api: FakeApiServer, client: KubeClusterClient
) -> None:
    api.fail(
        "DELETE",
        "/api/v1/namespaces/a/pods/victim",
        409,
        "Conflict",
        "Precondition failed: UID in precondition: uid-9, UID in object meta: uid-10",
    )
    with pytest.raises(ConflictError, match="Precondition failed"):
        await client.delete_pod("a", "victim", "uid-9")


async def test_delete_of_a_missing_object_is_not_found(
    api: FakeApiServer, client: KubeClusterClient
) -> None:
    with pytest.raises(NotFoundError):
        await client.delete("configmaps", "a", "gone")
    assert api.only().path == "/api/v1/namespaces/a/configmaps/gone"


async def test_create_posts_to_the_objects_namespace_with_type_fields(
    api: FakeApiServer, client: KubeClusterClient
) -> None:
    path = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"
    stored = {"kind": "Lease", "metadata": {"name": "s", "resourceVersion": "7"}}
    api.reply("POST", path, 201, stored)
    lease = {
        "metadata": {"name": "s", "namespace": "kube-system"},
        "spec": {"holderIdentity": "me"},
    }
    assert await client.create("leases", lease) == stored
    assert api.only().body == {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        **lease,
    }


async def test_create_of_a_taken_name_conflicts(
    api: FakeApiServer, client: KubeClusterClient
) -> None:
    api.fail("POST", "/api/v1/namespaces/default/pods", 409, "AlreadyExists", "already exists")
    with pytest.raises(ConflictError):
        await client.create("pods", {"metadata": {"name": "web"}})


async def test_update_puts_the_object_and_a_stale_version_conflicts(
    api: FakeApiServer, client: KubeClusterClient
) -> None:
    path = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/s"
    lease = {"metadata": {"name": "s", "namespace": "kube-system", "resourceVersion": "7"}}
    api.reply(
        "PUT", path, body={**lease, "metadata": {**lease["metadata"], "resourceVersion": "8"}}
    )
    api.fail("PUT", path, 409, "Conflict", 'Operation cannot be fulfilled on leases "s"')
    updated = await client.update("leases", lease)
    assert updated["metadata"]["resourceVersion"] == "8"
    with pytest.raises(ConflictError, match="Operation cannot be fulfilled"):
        await client.update("leases", lease)
    assert [r.body["metadata"]["resourceVersion"] for r in api.requests] == ["7", "7"]


async def test_create_event_posts_an_events_v1_event(
    api: FakeApiServer, client: KubeClusterClient
) -> None:
    path = "/apis/events.k8s.io/v1/namespaces/team-a/events"
    api.reply("POST", path, 201, {"kind": "Event"})
    await client.create_event(
        {
            "regarding": {"kind": "Pod", "namespace": "team-a", "name": "web"},
            "reason": "Scheduled",
            "action": "Binding",
            "note": "Successfully assigned team-a/web to n1",
        }
    )
    body = api.only().body
    assert body["apiVersion"] == "events.k8s.io/v1"
    # Named after the pod and the (fake) wall time, 2026-01-01T00:00:00Z, in nanoseconds.
    assert body["metadata"] == {"namespace": "team-a", "name": f"web.{1_767_225_600 * 10**9:x}"}
    assert body["note"] == "Successfully assigned team-a/web to n1"


async def test_requests_carry_user_agent_accept_and_bearer_token(
    api: FakeApiServer, make_client: ClientFactory
) -> None:
    client = make_client(token="s3cret")
    api.reply("GET", "/api/v1/nodes/n1", body={"kind": "Node"})
    await client.get("nodes", "", "n1")
    headers = api.only().headers
    assert headers["User-Agent"] == "kube-pyscheduler/9.9.9"
    assert headers["Accept"] == "application/json"
    assert headers["authorization"] == "Bearer s3cret"


async def test_the_answers_to_writes_are_read_but_not_parsed(
    api: FakeApiServer, client: KubeClusterClient, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Bindings, Events, status patches, merge patches and deletes: the caller has no use for
    # the object the server answers with (a whole pod, for a status patch).
    parsed: list[bytes] = []

    def counting_decode(data: bytes) -> Any:
        parsed.append(data)
        return json.loads(data)

    monkeypatch.setattr(transport, "decode", counting_decode)
    pod_path = "/api/v1/namespaces/team-a/pods/web"
    claim_path = "/apis/resource.k8s.io/v1/namespaces/team-a/resourceclaims/gpu"
    api.reply("POST", binding_path(), 201, CREATED)
    api.reply("POST", "/apis/events.k8s.io/v1/namespaces/team-a/events", 201, {"kind": "Event"})
    api.reply("PATCH", f"{pod_path}/status", body={"kind": "Pod"})
    api.reply("PATCH", claim_path, body={"kind": "ResourceClaim"})
    api.reply("DELETE", pod_path, body={"kind": "Pod"})
    api.reply("DELETE", claim_path, body={"kind": "ResourceClaim"})
    api.reply("GET", "/api/v1/nodes/n1", body={"kind": "Node"})
    await client.bind(pending_pod(), "n1")
    await client.create_event({"regarding": {"namespace": "team-a", "name": "web"}})
    await client.patch_pod_status("team-a", "web", {"conditions": []})
    await client.patch_object("resourceclaims", "team-a", "gpu", {"metadata": {"labels": {}}})
    await client.delete_pod("team-a", "web", "uid-1")
    await client.delete("resourceclaims", "team-a", "gpu")
    assert [r.method for r in api.requests] == [
        "POST",
        "POST",
        "PATCH",
        "PATCH",
        "DELETE",
        "DELETE",
    ]
    assert parsed == []
    # The same connection pool then serves a read, whose answer is parsed.
    assert await client.get("nodes", "", "n1") == {"kind": "Node"}
    assert len(parsed) == 1
