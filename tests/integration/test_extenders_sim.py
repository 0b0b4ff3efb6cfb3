"""HTTP extenders against the in-memory cluster: the whole scheduler calls a real HTTP server
(in a thread of this process) to filter, prioritize and bind, as kube-scheduler calls them."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

import pytest

from scheduler.objects.pod import Pod
from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.e2e.processes import free_loopback_port
from tests.extender_server import REJECTION
from tests.extender_server import ExtenderBehaviour
from tests.extender_server import candidate_names
from tests.extender_server import extender_config
from tests.extender_server import running_extender
from tests.integration.harness import Harness

# An upper bound for the binding cycle's HTTP round trip, not a synchronisation delay.
BIND_DEADLINE_S = 10.0
POLL_S = 0.01


def _nodes() -> list[dict[str, Any]]:
    return [
        make_node("n1").capacity(cpu="4", memory="8Gi", pods="10").dict(),
        make_node("n2").capacity(cpu="4", memory="8Gi", pods="10").dict(),
        make_node("n3").capacity(cpu="4", memory="8Gi", pods="10").dict(),
        make_node("tainted").capacity(cpu="4", memory="8Gi", pods="10").taint("x", "y").dict(),
    ]


def sim_binder(harness: Harness, loop: asyncio.AbstractEventLoop) -> Callable[..., str]:
    """A binder for the extender's thread: makes the Binding in the simulated cluster."""

    def bind(namespace: str, name: str, uid: str, node: str) -> str:
        pod = Pod.from_dict(harness.pod(namespace, name))
        future = asyncio.run_coroutine_threadsafe(harness.sim.bind(pod, node), loop)
        future.result(timeout=BIND_DEADLINE_S)
        return ""

    return bind


async def _bound_node(harness: Harness, name: str) -> str:
    deadline = asyncio.get_running_loop().time() + BIND_DEADLINE_S
    while asyncio.get_running_loop().time() < deadline:
        await harness.quiesce()
        node = harness.node_of("default", name)
        if node:
            return node
        await asyncio.sleep(POLL_S)
    raise AssertionError(f"{name} was not bound within {BIND_DEADLINE_S} s")


async def _schedule(harness: Harness, pods: list[Any]) -> None:
    harness.create(pods)
    await harness.schedule_active()


async def test_the_extender_filters_prioritizes_and_binds_as_upstream_calls_it() -> None:
    behaviour = ExtenderBehaviour(reject={"n1"}, scores={"n2": 1, "n3": 10})
    with running_extender(behaviour) as extender:
        config = extender_config(extender.url, prioritize_weight=2, bind=True)
        async with Harness({"extenders": [config]}) as harness:
            behaviour.binder = sim_binder(harness, asyncio.get_running_loop())
            harness.create(_nodes())
            await _schedule(harness, [make_pod("p").req(cpu="1").dict()])
            assert await _bound_node(harness, "p") == "n3"
    assert extender.verbs() == ["filter", "prioritize", "bind"]
    [filtered] = extender.calls_of("filter")
    # The in-process filters ran first: the tainted node never reached the extender; without
    # nodeCacheCapable the extender gets whole Node objects.
    assert filtered["NodeNames"] is None
    assert [n["metadata"]["name"] for n in filtered["Nodes"]["items"]] == ["n1", "n2", "n3"]
    assert filtered["Pod"]["metadata"]["name"] == "p"
    [prioritized] = extender.calls_of("prioritize")
    # Prioritize sees only what the filter kept.
    assert [n["metadata"]["name"] for n in prioritized["Nodes"]["items"]] == ["n2", "n3"]
    [binding] = extender.calls_of("bind")
    uid = harness.pod("default", "p")["metadata"]["uid"]
    assert binding == {"PodName": "p", "PodNamespace": "default", "PodUID": uid, "Node": "n3"}
    assert harness.event_notes("default", "p", "Scheduled") == [
        "Successfully assigned default/p to n3"
    ]


async def test_a_node_cache_capable_extender_gets_node_names() -> None:
    with running_extender(ExtenderBehaviour(reject={"n2", "n3"})) as extender:
        config = extender_config(extender.url, nodeCacheCapable=True)
        async with Harness({"extenders": [config]}) as harness:
            harness.create(_nodes())
            await _schedule(harness, [make_pod("p").dict()])
            assert await _bound_node(harness, "p") == "n1"
    [filtered] = extender.calls_of("filter")
    assert filtered["Nodes"] is None
    assert filtered["NodeNames"] == ["n1", "n2", "n3"]


async def test_extender_rejections_are_counted_in_the_fit_error() -> None:
    behaviour = ExtenderBehaviour(reject={"n1", "n2"}, unresolvable={"n3"})
    with running_extender(behaviour) as extender:
        async with Harness({"extenders": [extender_config(extender.url)]}) as harness:
            harness.create(_nodes())
            await _schedule(harness, [make_pod("p").dict()])
            message = harness.scheduled_message("default", "p")
            assert harness.node_of("default", "p") is None
            # Writing its PodScheduled condition updated the pod, and the Extender rejector is
            # registered for every Pod event (as upstream's), so the update sent it to backoff.
            assert harness.scheduler.queue.locate("default/p") == "backoff"
    # Preemption considers the nodes rejected as merely unschedulable, finds no victims there.
    assert message == (
        f"0/4 nodes are available: 1 node(s) had untolerated taint(s), 3 {REJECTION}. "
        "no new claims to deallocate, preemption: 0/4 nodes are available: "
        "2 No preemption victims found for incoming pod, 2 Preemption is not helpful for "
        "scheduling."
    )


async def test_an_extender_managing_resources_sees_only_pods_asking_for_them() -> None:
    managed = [{"name": "example.com/widget", "ignoredByScheduler": True}]
    with running_extender(ExtenderBehaviour()) as extender:
        config = extender_config(extender.url, managedResources=managed)
        async with Harness({"extenders": [config]}) as harness:
            harness.create(_nodes())
            plain = make_pod("plain").dict()
            # The nodes have no widgets: NodeResourcesFit ignores the resource, as the
            # extender manages it.
            asking = make_pod("asking").dict()
            asking["spec"]["containers"][0]["resources"] = {"limits": {"example.com/widget": "1"}}
            await _schedule(harness, [plain, asking])
            assert await _bound_node(harness, "plain")
            assert await _bound_node(harness, "asking")
    [filtered] = extender.calls_of("filter")
    assert filtered["Pod"]["metadata"]["name"] == "asking"


@pytest.mark.parametrize("ignorable", [False, True])
async def test_an_unreachable_extender_fails_the_attempt_unless_ignorable(
    ignorable: bool,
) -> None:
    url = f"http://127.0.0.1:{free_loopback_port()}"
    config = extender_config(url, prioritize_weight=1, ignorable=ignorable)
    async with Harness({"extenders": [config]}) as harness:
        harness.create(_nodes())
        harness.create([make_pod("p").dict()])
        await harness.schedule_active()
        if ignorable:
            assert await _bound_node(harness, "p")
            return
        assert harness.node_of("default", "p") is None
        expected = f'Post "{url}/filter": dial tcp {url[7:]}: connect: connection refused'
        assert harness.scheduled_message("default", "p") == expected
        assert harness.event_notes("default", "p", "FailedScheduling") == [expected]
        # An error, not a rejection: the pod is retried after backoff.
        assert harness.scheduler.queue.locate("default/p") == "backoff"
        conditions = harness.pod("default", "p")["status"]["conditions"]
        assert [c["reason"] for c in conditions if c["type"] == "PodScheduled"] == [
            "SchedulerError"
        ]


async def test_an_extender_failing_on_the_nominated_node_leaves_the_search_to_every_node() -> None:
    """As upstream's evaluateNominatedNode: the failure is logged, and the pod is placed in
    the same attempt, not sent to backoff."""
    behaviour = ExtenderBehaviour(filter_error_alone="n2", scores={"n3": 10})
    with running_extender(behaviour) as extender:
        config = extender_config(extender.url, prioritize_weight=1)
        async with Harness({"extenders": [config]}) as harness:
            harness.create(_nodes())
            pod = make_pod("p").req(cpu="1").dict()
            pod["status"]["nominatedNodeName"] = "n2"
            await _schedule(harness, [pod])
            assert await _bound_node(harness, "p") == "n3"
            assert harness.event_notes("default", "p", "FailedScheduling") == []
    offered = [candidate_names(body) for body in extender.calls_of("filter")]
    assert offered == [["n2"], ["n1", "n2", "n3"]]


async def test_the_cache_stands_still_while_an_extender_is_asked() -> None:
    """Nodes that come and go while the filter call is out are not seen by the attempt (as with
    upstream's snapshot: rows found before the call still name the same nodes after it), and
    the cache has caught up once the attempt is over."""
    behaviour = ExtenderBehaviour(scores={"n3": 10})
    with running_extender(behaviour) as extender:
        config = extender_config(extender.url, prioritize_weight=1)
        async with Harness({"extenders": [config]}) as harness:
            loop = asyncio.get_running_loop()
            late = make_node("late").capacity(cpu="4", memory="8Gi", pods="10").dict()
            store = harness.scheduler.informers["nodes"].store

            def change_the_nodes(verb: str) -> None:
                if verb != "filter":
                    return
                remove = harness.sim.delete("nodes", "", "n1")
                asyncio.run_coroutine_threadsafe(remove, loop).result(BIND_DEADLINE_S)
                loop.call_soon_threadsafe(harness.create, [late])
                # Until the informer's store has both changes: the events arrived meanwhile.
                deadline = time.monotonic() + BIND_DEADLINE_S
                while store.get("", "n1") is not None or store.get("", "late") is None:
                    assert time.monotonic() < deadline, "the node events did not arrive"
                    time.sleep(POLL_S)

            behaviour.on_call = change_the_nodes
            harness.create(_nodes()[:3])
            await _schedule(harness, [make_pod("p").dict()])
            assert await _bound_node(harness, "p") == "n3"
            assert harness.scheduler.cache.node_info("late") is not None
            assert sorted(harness.scheduler.cache.table.names) == ["late", "n2", "n3"]
    [prioritized] = extender.calls_of("prioritize")
    assert [n["metadata"]["name"] for n in prioritized["Nodes"]["items"]] == ["n1", "n2", "n3"]


async def test_a_profile_without_score_plugins_still_gives_a_prioritizer_every_node() -> None:
    """One feasible node is enough only when nothing ranks them: a prioritizing extender does,
    so the search finds every feasible node, as upstream's numFeasibleNodesToFind."""
    profile = {
        "schedulerName": "default-scheduler",
        "plugins": {"score": {"disabled": [{"name": "*"}]}},
    }
    behaviour = ExtenderBehaviour(scores={"n3": 10})
    with running_extender(behaviour) as extender:
        config = extender_config(extender.url, filter_verb=False, prioritize_weight=1)
        async with Harness({"profiles": [profile], "extenders": [config]}) as harness:
            harness.create(_nodes()[:3])
            await _schedule(harness, [make_pod("p").dict()])
            assert harness.node_of("default", "p") == "n3"
    [prioritized] = extender.calls_of("prioritize")
    assert [n["metadata"]["name"] for n in prioritized["Nodes"]["items"]] == ["n1", "n2", "n3"]
