"""The JSON of k8s.io/kube-scheduler/extender/v1, as Go encodes and decodes it."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.runtime.extenders import wire
from scheduler.testing import make_node
from scheduler.testing import make_pod


def test_extender_args_carry_whole_nodes_or_only_their_names() -> None:
    pod = make_pod("p").dict()
    nodes = [make_node("a").dict(), make_node("b").dict()]
    full = wire.extender_args(pod, nodes, node_names_only=False)
    # Go field names (the types have no JSON tags); unset pointers are sent as null.
    assert full == {"Pod": pod, "Nodes": {"metadata": {}, "items": nodes}, "NodeNames": None}
    names = wire.extender_args(pod, nodes, node_names_only=True)
    assert names == {"Pod": pod, "Nodes": None, "NodeNames": ["a", "b"]}


def test_binding_args() -> None:
    assert wire.binding_args("ns", "p", "uid-1", "n1") == {
        "PodName": "p",
        "PodNamespace": "ns",
        "PodUID": "uid-1",
        "Node": "n1",
    }


def test_filter_results_are_read_with_go_s_case_insensitive_keys() -> None:
    result = wire.parse_filter_result(
        {
            "nodenames": ["a"],
            "failedNodes": {"b": "busy"},
            "FailedAndUnresolvableNodes": {"c": "wrong zone"},
            "error": "",
        }
    )
    assert result.node_names == ("a",)
    assert result.nodes is None
    assert result.failed == {"b": "busy"}
    assert result.failed_and_unresolvable == {"c": "wrong zone"}
    assert result.error == ""


def test_a_filter_result_may_send_back_node_objects() -> None:
    node = make_node("a").dict()
    result = wire.parse_filter_result({"Nodes": {"items": [node]}, "NodeNames": None})
    assert result.node_names is None
    assert result.nodes == (node,)


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ([], "ExtenderFilterResult: expected an object, got an array"),
        ({"NodeNames": "a"}, "ExtenderFilterResult.NodeNames: expected an array of strings"),
        ({"FailedNodes": {"a": 1}}, "ExtenderFilterResult.FailedNodes['a']: expected a string"),
        ({"Error": 3}, "ExtenderFilterResult.Error: expected a string, got a number"),
    ],
)
def test_a_misshapen_filter_result_is_refused_naming_the_field(answer: Any, problem: str) -> None:
    with pytest.raises(wire.WireError, match=problem.replace("[", r"\[")):
        wire.parse_filter_result(answer)


def test_host_priorities() -> None:
    answer = [{"Host": "a", "Score": 3}, {"host": "b", "score": 10}, {"Host": "c"}]
    assert wire.parse_host_priorities(answer) == [("a", 3), ("b", 10), ("c", 0)]
    assert wire.parse_host_priorities(None) == []
    with pytest.raises(wire.WireError, match=r"HostPriorityList\[0\].Score"):
        wire.parse_host_priorities([{"Host": "a", "Score": "high"}])


def test_binding_result() -> None:
    assert wire.parse_binding_result({"Error": ""}) == ""
    assert wire.parse_binding_result({"error": "no room"}) == "no room"


def test_preemption_args_carry_whole_victims_or_only_their_uids() -> None:
    pod = make_pod("p").dict()
    victim = make_pod("v").dict()
    uid = victim["metadata"]["uid"]
    victims = {"n1": ([victim], 1)}
    full = wire.preemption_args(pod, victims, uids_only=False)
    assert full == {
        "Pod": pod,
        "NodeNameToVictims": {"n1": {"Pods": [victim], "NumPDBViolations": 1}},
        "NodeNameToMetaVictims": None,
    }
    meta = wire.preemption_args(pod, victims, uids_only=True)
    assert meta == {
        "Pod": pod,
        "NodeNameToVictims": None,
        "NodeNameToMetaVictims": {"n1": {"Pods": [{"UID": uid}], "NumPDBViolations": 1}},
    }


def test_preemption_results_are_read_with_go_s_case_insensitive_keys() -> None:
    answer = {
        "nodeNameToMetaVictims": {
            "n1": {"pods": [{"uid": "a"}, {"UID": "b"}], "numPDBViolations": 2},
            "n2": {"Pods": None},
        }
    }
    assert wire.parse_preemption_result(answer) == {
        "n1": wire.MetaVictims(("a", "b"), 2),
        "n2": wire.MetaVictims((), 0),
    }
    assert wire.parse_preemption_result({"NodeNameToMetaVictims": None}) == {}


@pytest.mark.parametrize(
    ("answer", "problem"),
    [
        ([], "ExtenderPreemptionResult: expected an object, got an array"),
        (
            {"NodeNameToMetaVictims": {"n1": None}},
            "ExtenderPreemptionResult.NodeNameToMetaVictims['n1']: expected an object, got null",
        ),
        (
            {"NodeNameToMetaVictims": {"n1": {"Pods": {}}}},
            "NodeNameToMetaVictims['n1'].Pods: expected an array, got an object",
        ),
        (
            {"NodeNameToMetaVictims": {"n1": {"Pods": [{"UID": 7}]}}},
            "NodeNameToMetaVictims['n1'].Pods[0].UID: expected a string, got a number",
        ),
        (
            {"NodeNameToMetaVictims": {"n1": {"NumPDBViolations": "1"}}},
            "NodeNameToMetaVictims['n1'].NumPDBViolations: expected an integer",
        ),
    ],
)
def test_a_misshapen_preemption_result_is_refused_naming_the_field(
    answer: Any, problem: str
) -> None:
    with pytest.raises(wire.WireError) as raised:
        wire.parse_preemption_result(answer)
    assert problem in str(raised.value)
