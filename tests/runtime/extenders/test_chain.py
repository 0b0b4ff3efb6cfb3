"""Which extenders a pod meets, in which order, and how their scores count."""

from __future__ import annotations

from typing import Any

import pytest
from structlog.testing import capture_logs

from scheduler.config import Extender
from scheduler.framework.status import Code
from scheduler.objects.pod import Pod
from scheduler.runtime.extenders import ExtenderCallError
from scheduler.runtime.extenders import ExtenderChain
from scheduler.runtime.extenders import HTTPExtender
from scheduler.runtime.extenders import scaled_score
from scheduler.testing import make_pod


def _extender(**fields: Any) -> Extender:
    return Extender.model_validate({"urlPrefix": "http://127.0.0.1:1", **fields})


def test_scores_are_scaled_from_ten_to_a_hundred_and_weighted() -> None:
    # score × weight × (MaxNodeScore / MaxExtenderPriority)
    assert scaled_score(10, 1) == 100
    assert scaled_score(3, 2) == 60
    assert scaled_score(0, 5) == 0


def test_ignorable_extenders_come_last_in_configured_order() -> None:
    chain = ExtenderChain(
        [
            _extender(urlPrefix="http://a", ignorable=True),
            _extender(urlPrefix="http://b"),
            _extender(urlPrefix="http://c", ignorable=True),
            _extender(urlPrefix="http://d"),
        ]
    )
    assert [e.name for e in chain.extenders] == ["http://b", "http://d", "http://a", "http://c"]


def _pod(containers: list[dict[str, Any]], init: list[dict[str, Any]] | None = None) -> Pod:
    raw = make_pod("p").dict()
    raw["spec"]["containers"] = containers
    if init:
        raw["spec"]["initContainers"] = init
    return Pod.from_dict(raw)


GPU = "example.com/gpu"


@pytest.mark.parametrize(
    ("containers", "init", "interested"),
    [
        ([{"name": "c", "resources": {"requests": {GPU: "1"}}}], [], True),
        ([{"name": "c", "resources": {"limits": {GPU: "1"}}}], [], True),
        ([{"name": "c"}], [{"name": "i", "resources": {"requests": {GPU: "1"}}}], True),
        ([{"name": "c", "resources": {"requests": {"cpu": "1"}}}], [], False),
        ([{"name": "c"}], [], False),
    ],
)
def test_an_extender_managing_resources_is_interested_only_in_pods_asking_for_them(
    containers: list[dict[str, Any]], init: list[dict[str, Any]], interested: bool
) -> None:
    extender = HTTPExtender(_extender(managedResources=[{"name": GPU}]))
    assert extender.is_interested(_pod(containers, init)) is interested


def test_an_extender_managing_nothing_sees_every_pod() -> None:
    extender = HTTPExtender(_extender())
    assert extender.is_interested(_pod([{"name": "c"}]))
    chain = ExtenderChain([])
    assert not chain
    assert not chain.interested_in(_pod([{"name": "c"}]))


async def test_an_extender_without_a_filter_verb_keeps_every_node() -> None:
    extender = HTTPExtender(_extender())
    nodes = [{"metadata": {"name": "a"}}, {"metadata": {"name": "b"}}]
    answer = await extender.filter(_pod([{"name": "c"}]), nodes)
    assert answer.node_names == ("a", "b")


async def test_no_binder_leaves_binding_to_the_bind_plugins() -> None:
    chain = ExtenderChain([_extender(filterVerb="filter")])
    assert await chain.bind(_pod([{"name": "c"}]), "a") is None


async def test_a_binder_that_fails_is_passed_over_only_when_ignorable() -> None:
    pod = _pod([{"name": "c"}])
    # Nothing listens on port 1 of the loopback: every call fails at once.
    ignorable = ExtenderChain([_extender(bindVerb="bind", ignorable=True)])
    required = ExtenderChain([_extender(bindVerb="bind")])
    try:
        with capture_logs() as logs:
            assert await ignorable.bind(pod, "a") is None
        assert [entry["event"] for entry in logs] == [
            "Skipping extender in bind as it returned error and has ignorable flag set"
        ]
        status = await required.bind(pod, "a")
        assert status is not None
        assert status.code is Code.ERROR
        assert "127.0.0.1:1/bind" in status.message()
    finally:
        await ignorable.close()
        await required.close()


async def test_a_filter_that_fails_is_passed_over_only_when_ignorable() -> None:
    pod = _pod([{"name": "c"}])
    nodes = [{"metadata": {"name": "a"}}, {"metadata": {"name": "b"}}]
    ignorable = ExtenderChain([_extender(filterVerb="filter", ignorable=True)])
    required = ExtenderChain([_extender(filterVerb="filter")])
    try:
        with capture_logs() as logs:
            outcome = await ignorable.filter(pod, nodes)
        assert outcome.node_names == ["a", "b"]
        assert [entry["event"] for entry in logs] == [
            "Skipping extender as it returned error and has ignorable flag set"
        ]
        with pytest.raises(ExtenderCallError):
            await required.filter(pod, nodes)
    finally:
        await ignorable.close()
        await required.close()
