"""SIGUSR2's comparer and dumper: where the cache and queue differ from the informers, and the
cache and queue in kube-scheduler's words."""

from __future__ import annotations

import io
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from scheduler.core.cache_debugger import CacheDebugger
from scheduler.core.cache_debugger import node_text
from scheduler.framework.node_info import NodeInfo
from scheduler.objects.pod import Pod
from scheduler.observability import configure_logging
from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.integration.harness import Harness

NODE_N1 = (
    "Node name: n1\n"
    "Deleted: false\n"
    "Requested Resources: &{MilliCPU:500 Memory:268435456 EphemeralStorage:0 "
    "AllowedPodNumber:0 ScalarResources:map[example.com/gpu:1]}\n"
    "Allocatable Resources:&{MilliCPU:2000 Memory:1073741824 EphemeralStorage:0 "
    "AllowedPodNumber:10 ScalarResources:map[example.com/gpu:2]}\n"
    "Scheduled Pods(number: 1):\n"
    "name: web, namespace: default, uid: uid-web, phase: Pending, nominated node: \n"
)


@pytest.fixture
async def harness() -> AsyncIterator[Harness]:
    """n1 and n2; `web` bound to n1, `too-big` waiting as unschedulable, `elsewhere` pending
    for another scheduler."""
    async with Harness() as h:
        h.create(
            [
                make_node("n1")
                .capacity(cpu="2", memory="1Gi", pods="10", **{"example.com/gpu": "2"})
                .dict(),
                make_node("n2").capacity(cpu="1", memory="1Gi", pods="10").dict(),
                make_pod("web")
                .uid("uid-web")
                .req(cpu="500m", memory="256Mi", **{"example.com/gpu": "1"})
                .dict(),
                make_pod("too-big").uid("uid-too-big").req(cpu="8").dict(),
                make_pod("elsewhere").uid("uid-elsewhere").scheduler("other-scheduler").dict(),
            ]
        )
        await h.schedule_active()
        assert h.node_of("default", "web") == "n1"
        yield h


def _debugger(h: Harness) -> CacheDebugger:
    debugger = h.scheduler.cache_debugger()
    assert debugger is not None
    return debugger


def _records(run: Any, verbosity: int = 3) -> list[dict[str, Any]]:
    stream = io.StringIO()
    configure_logging("json", verbosity, stream, cache_loggers=False)
    run()
    return [json.loads(line) for line in stream.getvalue().splitlines()]


async def test_a_cache_that_agrees_reports_no_mismatch(harness: Harness) -> None:
    nodes, pods = _debugger(harness).compare()
    assert (nodes.missed, nodes.redundant, pods.missed, pods.redundant) == ([], [], [], [])


async def test_the_comparer_logs_its_start_and_end_at_v3_and_nothing_else_when_all_agree(
    harness: Harness,
) -> None:
    debugger = _debugger(harness)
    records = _records(debugger.compare)
    assert [(r["msg"], r["v"]) for r in records] == [
        ("Cache comparer started", 3),
        ("Cache comparer finished", 3),
    ]
    assert _records(debugger.compare, verbosity=2) == []


async def test_nodes_and_pods_the_cache_lost_or_kept_are_named(harness: Harness) -> None:
    cache = harness.scheduler.cache
    # As if the removal of n2, the binding of `web` and a pod's deletion had been missed:
    cache.remove_node(make_node("n2").obj())
    cache.remove_pod(cache.get_pod("default/web") or make_pod("web").obj())
    cache.add_pod(make_pod("gone").uid("uid-gone").node("n1").obj())

    records = _records(_debugger(harness).compare)

    mismatches = [r for r in records if r["msg"] == "Cache mismatch"]
    assert [{k: v for k, v in r.items() if k.endswith(("Nodes", "Pods"))} for r in mismatches] == [
        {"missedNodes": ["n2"], "redundantNodes": []},
        {"missedPods": ["uid-web"], "redundantPods": ["uid-gone"]},
    ]


async def test_the_dump_writes_each_node_and_the_queue_in_upstreams_words(
    harness: Harness,
) -> None:
    records = _records(_debugger(harness).dump, verbosity=0)

    [nodes, queue] = records
    assert nodes["msg"] == "Dump of cached NodeInfo"
    assert nodes["nodes"] == (
        NODE_N1 + "\n\n"
        "Node name: n2\nDeleted: false\n"
        "Requested Resources: &{MilliCPU:0 Memory:0 EphemeralStorage:0 AllowedPodNumber:0 "
        "ScalarResources:map[]}\n"
        "Allocatable Resources:&{MilliCPU:1000 Memory:1073741824 EphemeralStorage:0 "
        "AllowedPodNumber:10 ScalarResources:map[]}\n"
        "Scheduled Pods(number: 0):\n"
    )
    assert queue["msg"] == "Dump of scheduling queue"
    assert queue["summary"] == "activeQ:0; backoffQ:0; unschedulablePods:1"
    assert queue["pods"] == (
        "name: too-big, namespace: default, uid: uid-too-big, phase: Pending, nominated node: \n"
    )


async def test_in_text_format_the_dump_is_a_block_of_indented_lines(harness: Harness) -> None:
    stream = io.StringIO()
    configure_logging("text", 0, stream, cache_loggers=False)
    _debugger(harness).dump()

    text = stream.getvalue()
    indented = "".join(f"\t{line}\n" for line in NODE_N1.splitlines())
    assert f'"Dump of cached NodeInfo" nodes=<\n{indented}\t\n\t\n\tNode name: n2\n' in text
    assert text.endswith(
        'summary="activeQ:0; backoffQ:0; unschedulablePods:1" pods=<\n'
        "\tname: too-big, namespace: default, uid: uid-too-big, phase: Pending, "
        "nominated node: \n >\n"
    )


def test_a_node_lists_the_pods_nominated_to_it_and_says_when_it_is_gone() -> None:
    info = NodeInfo()  # a node the cache keeps only for its pods
    info.add_pod(make_pod("stays").uid("u1").node("lost").phase("Running").obj())
    nominated: list[Pod] = [make_pod("next").uid("u2").nominated("lost").obj()]

    assert node_text("lost", info, nominated) == (
        "Node name: lost\nDeleted: true\n"
        "Requested Resources: &{MilliCPU:0 Memory:0 EphemeralStorage:0 AllowedPodNumber:0 "
        "ScalarResources:map[]}\n"
        "Allocatable Resources:&{MilliCPU:0 Memory:0 EphemeralStorage:0 AllowedPodNumber:0 "
        "ScalarResources:map[]}\n"
        "Scheduled Pods(number: 1):\n"
        "name: stays, namespace: default, uid: u1, phase: Running, nominated node: \n"
        "Nominated Pods(number: 1):\n"
        "name: next, namespace: default, uid: u2, phase: Pending, nominated node: lost\n"
    )


def test_a_scheduler_not_started_has_nothing_to_compare() -> None:
    harness = Harness()
    assert harness.scheduler.cache_debugger() is None
