"""Extenders with a preempt verb, against the in-memory cluster: DefaultPreemption sends its
candidates to a real HTTP server (a thread of this process) and chooses among what comes back,
as kube-scheduler's preemption calls ProcessPreemption."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.extender_server import ExtenderBehaviour
from tests.extender_server import extender_config
from tests.extender_server import running_extender
from tests.integration.harness import Harness
from tests.integration.test_preemption_sim import ENABLED
from tests.integration.test_preemption_sim import bound
from tests.integration.test_preemption_sim import extra_plugins
from tests.integration.test_preemption_sim import node
from tests.integration.test_preemption_sim import pod_names
from tests.integration.test_preemption_sim import settle

PROFILE = {"schedulerName": "default-scheduler", "plugins": {"postFilter": ENABLED}}
FIT_ERROR = "0/2 nodes are available: 2 Insufficient cpu."


def _config(extender: dict[str, Any]) -> dict[str, Any]:
    return {"profiles": [PROFILE], "extenders": [extender]}


def _cluster() -> list[dict[str, Any]]:
    """n1's victim is the cheaper one (priority 0 against 10): left alone, preemption picks
    n1."""
    return [
        node("n1"),
        node("n2"),
        bound("cheap", "n1", cpu="2", priority=0),
        bound("dear", "n2", cpu="2", priority=10),
        make_pod("vip").req(cpu="2").priority(100).dict(),
    ]


async def _preempt(h: Harness) -> None:
    h.create(_cluster())
    await h.schedule_active()
    await settle(h)


async def test_the_extender_sees_every_candidate_and_the_node_it_drops_is_spared() -> None:
    behaviour = ExtenderBehaviour(preempt_drop={"n1"})
    with running_extender(behaviour) as extender:
        config = extender_config(extender.url, filter_verb=False, preempt=True)
        async with Harness(_config(config), extra_plugins=extra_plugins()) as h:
            await _preempt(h)
            assert pod_names(h) == {"cheap", "vip"}
            assert h.pod("default", "vip")["status"].get("nominatedNodeName") == "n2"
            assert h.event_notes("default", "vip", "FailedScheduling") == [FIT_ERROR]
            uids = {name: h.pod("default", name)["metadata"]["uid"] for name in ("cheap", "vip")}
    [sent] = extender.calls_of("preempt")
    assert sent["Pod"]["metadata"]["uid"] == uids["vip"]
    # Without nodeCacheCapable the victims go as whole Pod objects.
    assert sent["NodeNameToMetaVictims"] is None
    victims = sent["NodeNameToVictims"]
    assert sorted(victims) == ["n1", "n2"]
    assert [p["metadata"]["uid"] for p in victims["n1"]["Pods"]] == [uids["cheap"]]
    assert victims["n1"]["NumPDBViolations"] == 0


async def test_a_node_cache_capable_extender_gets_victims_as_uids() -> None:
    with running_extender(ExtenderBehaviour()) as extender:
        config = extender_config(
            extender.url, filter_verb=False, preempt=True, nodeCacheCapable=True
        )
        async with Harness(_config(config), extra_plugins=extra_plugins()) as h:
            await _preempt(h)
            # The extender kept both candidates: the cheaper victim goes, as without it.
            assert pod_names(h) == {"dear", "vip"}
            cheap = h.pod("default", "dear")["metadata"]["uid"]
    [sent] = extender.calls_of("preempt")
    assert sent["NodeNameToVictims"] is None
    assert sent["NodeNameToMetaVictims"]["n2"] == {
        "Pods": [{"UID": cheap}],
        "NumPDBViolations": 0,
    }


@pytest.mark.parametrize("ignorable", [False, True])
async def test_a_victim_the_node_does_not_have_fails_preemption_unless_ignorable(
    ignorable: bool,
) -> None:
    answer = {"NodeNameToMetaVictims": {"n2": {"Pods": [{"UID": "nope"}]}}}
    behaviour = ExtenderBehaviour(preempt_answer=answer)
    with running_extender(behaviour) as extender:
        config = extender_config(extender.url, filter_verb=False, preempt=True, ignorable=ignorable)
        async with Harness(_config(config), extra_plugins=extra_plugins()) as h:
            await _preempt(h)
            notes = h.event_notes("default", "vip", "FailedScheduling")
            if ignorable:
                # Passed over: preemption goes on with the dry run's own choice.
                assert pod_names(h) == {"dear", "vip"}
                assert notes == [FIT_ERROR]
                return
            assert pod_names(h) == {"cheap", "dear", "vip"}
            assert h.pod("default", "vip")["status"].get("nominatedNodeName") is None
            assert notes == [
                f"{FIT_ERROR} preemption: extender: {extender.url} claims to preempt pod "
                "(UID: &{nope}) on node: n2, but the pod is not found on that node"
            ]


NO_VICTIMS = {"NodeNameToMetaVictims": {"n2": {"Pods": [], "NumPDBViolations": 0}}}


@pytest.mark.parametrize(
    ("behaviour", "outcome"),
    [
        (
            ExtenderBehaviour(preempt_answer=NO_VICTIMS),
            'preemption: expected at least one victim pod on node "n2"',
        ),
        # A rejection, not an error: the next PostFilter plugin (DynamicResources, from
        # multiPoint) adds its reason.
        (
            ExtenderBehaviour(preempt_drop={"n1", "n2"}),
            "preemption: no candidate node for preemption, no new claims to deallocate",
        ),
    ],
    ids=["a-node-kept-without-victims", "every-node-dropped"],
)
async def test_nothing_is_preempted_when_the_extender_leaves_no_usable_candidate(
    behaviour: ExtenderBehaviour, outcome: str
) -> None:
    with running_extender(behaviour) as extender:
        config = extender_config(extender.url, filter_verb=False, preempt=True)
        async with Harness(_config(config), extra_plugins=extra_plugins()) as h:
            await _preempt(h)
            assert pod_names(h) == {"cheap", "dear", "vip"}
            notes = h.event_notes("default", "vip", "FailedScheduling")
            assert notes == [f"{FIT_ERROR} {outcome}"]


async def test_a_pod_the_extender_does_not_manage_preempts_without_asking_it() -> None:
    managed: dict[str, Any] = {"managedResources": [{"name": "example.com/gpu"}]}
    with running_extender(ExtenderBehaviour(preempt_drop={"n1", "n2"})) as extender:
        config = extender_config(extender.url, filter_verb=False, preempt=True, **managed)
        async with Harness(_config(config), extra_plugins=extra_plugins()) as h:
            await _preempt(h)
            assert pod_names(h) == {"dear", "vip"}
    assert extender.verbs() == []


async def test_a_nominated_node_the_filter_drops_without_naming_it_is_not_waited_for() -> None:
    """vip is nominated to n1, where a victim of its earlier preemption is still terminating
    and room is free: n1 passes the Filters, but the extender's filter leaves it out without
    naming it. Upstream reads a node missing from its statuses as UnschedulableAndUnresolvable,
    so the pod does not wait for n1's victim and preempts on n2."""
    leaving = bound("leaving", "n1", cpu="2", priority=0)
    leaving["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    leaving["status"]["conditions"] = [
        {"type": "DisruptionTarget", "status": "True", "reason": "PreemptionByScheduler"}
    ]
    vip = make_pod("vip").req(cpu="2").priority(100).dict()
    vip["status"]["nominatedNodeName"] = "n1"
    with running_extender(ExtenderBehaviour(drop={"n1"})) as extender:
        config = extender_config(extender.url)
        async with Harness(_config(config), extra_plugins=extra_plugins()) as h:
            wide = make_node("n1").capacity(cpu="4", memory="8Gi", pods="10").dict()
            h.create([wide, node("n2"), leaving, bound("dear", "n2", cpu="2", priority=10), vip])
            await h.schedule_active()
            await settle(h)
            assert pod_names(h) == {"leaving", "vip"}
            assert h.pod("default", "vip")["status"].get("nominatedNodeName") == "n2"
