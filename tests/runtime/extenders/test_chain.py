"""Which extenders a pod meets, in which order, and how their scores count."""

from __future__ import annotations

import base64
from typing import Any

import pytest
from structlog.testing import capture_logs

from scheduler.config import Extender
from scheduler.framework.extenders import ExtenderError
from scheduler.framework.extenders import PodsOnNode
from scheduler.framework.extenders import Victims
from scheduler.framework.status import Code
from scheduler.objects.pod import Pod
from scheduler.observability import set_verbosity
from scheduler.runtime.extenders import ExtenderCallError
from scheduler.runtime.extenders import ExtenderChain
from scheduler.runtime.extenders import HTTPExtender
from scheduler.runtime.extenders import scaled_score
from scheduler.testing import make_pod
from tests.e2e.certs import CertificateAuthority
from tests.extender_server import ExtenderBehaviour
from tests.extender_server import running_extender


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


def _victims(*names: str) -> tuple[dict[str, Pod], dict[str, Victims]]:
    """Pods `names` on nodes n1, n2, ... (one each), and preemption's candidates over them."""
    pods = {f"n{i}": Pod.from_dict(make_pod(name).dict()) for i, name in enumerate(names, 1)}
    return pods, {node: Victims((pod,), 0) for node, pod in pods.items()}


def _pods_on(pods: dict[str, Pod]) -> PodsOnNode:
    def on(node: str) -> list[Pod] | None:
        return [pods[node]] if node in pods else None

    return on


async def test_each_preempting_extender_is_given_what_the_one_before_kept() -> None:
    pods, victims = _victims("a", "b", "c")
    with (
        running_extender(ExtenderBehaviour(preempt_drop={"n1"})) as first,
        running_extender(ExtenderBehaviour(preempt_drop={"n2"})) as second,
        running_extender(ExtenderBehaviour()) as filtering_only,
    ):
        chain = ExtenderChain(
            [
                _extender(urlPrefix=first.url, preemptVerb="preempt"),
                _extender(urlPrefix=filtering_only.url, filterVerb="filter"),
                _extender(urlPrefix=second.url, preemptVerb="preempt", nodeCacheCapable=True),
            ]
        )
        try:
            kept = await chain.process_preemption(_pod([{"name": "c"}]), victims, _pods_on(pods))
        finally:
            await chain.close()
    assert kept == {"n3": victims["n3"]}
    [to_second] = second.calls_of("preempt")
    assert sorted(to_second["NodeNameToMetaVictims"]) == ["n2", "n3"]
    assert filtering_only.verbs() == []


async def test_a_preempting_extender_that_fails_is_passed_over_only_when_ignorable() -> None:
    pods, victims = _victims("a")
    pod = _pod([{"name": "c"}])
    # Nothing listens on port 1 of the loopback: every call fails at once.
    ignorable = ExtenderChain([_extender(preemptVerb="preempt", ignorable=True)])
    required = ExtenderChain([_extender(preemptVerb="preempt")])
    set_verbosity(2)
    try:
        with capture_logs() as logs:
            assert await ignorable.process_preemption(pod, victims, _pods_on(pods)) == victims
        assert [entry["event"] for entry in logs] == [
            "Skipped extender as it returned error and has ignorable flag set"
        ]
        with pytest.raises(ExtenderError, match=r"127\.0\.0\.1:1/preempt"):
            await required.process_preemption(pod, victims, _pods_on(pods))
    finally:
        set_verbosity(0)
        await ignorable.close()
        await required.close()


@pytest.mark.parametrize("ignorable", [False, True])
async def test_a_node_kept_without_victims_fails_unless_the_extender_is_ignorable(
    ignorable: bool,
) -> None:
    pods, victims = _victims("a", "b")
    uid = pods["n2"].uid
    answer = {
        "NodeNameToMetaVictims": {
            "n1": {"Pods": []},
            "n2": {"Pods": [{"UID": uid}], "NumPDBViolations": 1},
        }
    }
    with running_extender(ExtenderBehaviour(preempt_answer=answer)) as extender:
        config = _extender(urlPrefix=extender.url, preemptVerb="preempt", ignorable=ignorable)
        chain = ExtenderChain([config])
        try:
            if not ignorable:
                with pytest.raises(ExtenderError) as raised:
                    await chain.process_preemption(_pod([]), victims, _pods_on(pods))
                assert str(raised.value) == 'expected at least one victim pod on node "n1"'
                return
            kept = await chain.process_preemption(_pod([]), victims, _pods_on(pods))
        finally:
            await chain.close()
    # The node is dropped, and the victims are the cache's pods, with the extender's count.
    assert kept == {"n2": Victims((pods["n2"],), 1)}


async def test_a_node_the_cache_does_not_know_fails_as_upstream_s_snapshot_lookup() -> None:
    pods, victims = _victims("a")
    answer = {"NodeNameToMetaVictims": {"gone": {"Pods": [{"UID": "x"}]}}}
    with running_extender(ExtenderBehaviour(preempt_answer=answer)) as extender:
        chain = ExtenderChain([_extender(urlPrefix=extender.url, preemptVerb="preempt")])
        try:
            with pytest.raises(ExtenderError) as raised:
                await chain.process_preemption(_pod([]), victims, _pods_on(pods))
        finally:
            await chain.close()
    assert str(raised.value) == 'nodeinfo not found for node name "gone"'


def test_only_interested_extenders_with_a_preempt_verb_take_part() -> None:
    gpu_pod = _pod([{"name": "c", "resources": {"requests": {GPU: "1"}}}])
    plain_pod = _pod([{"name": "c"}])
    managing = ExtenderChain([_extender(preemptVerb="preempt", managedResources=[{"name": GPU}])])
    assert managing.interested_in_preemption(gpu_pod)
    assert not managing.interested_in_preemption(plain_pod)
    assert not ExtenderChain([_extender(filterVerb="filter")]).interested_in_preemption(gpu_pod)


def test_each_extender_is_logged_at_v2_in_configured_order_without_its_private_key() -> None:
    pair = CertificateAuthority.create().issue_client("scheduler", [])
    key_data = base64.b64encode(pair.key_pem).decode()
    tls = {"insecure": True, "certData": base64.b64encode(pair.cert_pem).decode()}
    chain = ExtenderChain(
        [
            _extender(urlPrefix="http://a", ignorable=True, weight=3, prioritizeVerb="prio"),
            _extender(urlPrefix="https://b", tlsConfig={**tls, "keyData": key_data}),
        ]
    )
    with capture_logs() as quiet:
        chain.log_settings()
    set_verbosity(2)
    try:
        with capture_logs() as logs:
            chain.log_settings()
    finally:
        set_verbosity(0)
    assert quiet == []
    assert [entry["event"] for entry in logs] == ["Creating extender"] * 2
    first, second = (entry["extender"] for entry in logs)
    assert (first["urlPrefix"], first["weight"], first["ignorable"]) == ("http://a", 3, True)
    assert second["urlPrefix"] == "https://b"
    assert second["tlsConfig"]["keyData"] == "--- REDACTED ---"
    assert key_data not in repr(logs)
