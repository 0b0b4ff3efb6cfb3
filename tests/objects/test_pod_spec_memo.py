"""A pod spec is parsed once: the pods after the first with an equal spec share its fields."""

from __future__ import annotations

import copy
import datetime
from collections.abc import Iterator
from typing import Any

import pytest

from scheduler.objects import pod_spec_fields
from scheduler.objects.errors import InvalidObjectError
from scheduler.objects.pod import Pod


@pytest.fixture(autouse=True)
def _fresh_memo() -> Iterator[None]:
    pod_spec_fields.forget_specs()
    yield
    pod_spec_fields.forget_specs()


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many times a spec was parsed rather than remembered (one entry a parse)."""
    counted: list[int] = []
    real = pod_spec_fields._parse

    def counting(spec: Any) -> pod_spec_fields.PodSpecFields:
        counted.append(1)
        return real(spec)

    monkeypatch.setattr(pod_spec_fields, "_parse", counting)
    return counted


def _raw(name: str, cpu: str = "100m", node: str = "") -> dict[str, Any]:
    spec: dict[str, Any] = {
        "schedulerName": "kube-pyscheduler",
        "priority": 10,
        "containers": [
            {"name": "c", "image": "app:1", "resources": {"requests": {"cpu": cpu}}},
        ],
        "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}],
        "nodeSelector": {"zone": "a"},
    }
    if node:
        spec["nodeName"] = node
    return {"metadata": {"name": name, "namespace": "ns", "uid": name}, "spec": spec}


def test_replicas_share_one_parse_and_its_objects(parses: list[int]) -> None:
    first = Pod.from_dict(_raw("a"))
    second = Pod.from_dict(_raw("b"))
    assert len(parses) == 1
    assert second.requests is first.requests
    assert second.tolerations is first.tolerations
    assert (second.name, second.uid, second.requests["cpu"]) == ("b", "b", 100)


def test_placed_replicas_share_it_and_keep_their_own_node(parses: list[int]) -> None:
    pending = Pod.from_dict(_raw("a"))
    placed = Pod.from_dict(_raw("b", node="n1"))
    other = Pod.from_dict(_raw("c", node="n2"))
    assert len(parses) == 1
    assert (pending.node_name, placed.node_name, other.node_name) == ("", "n1", "n2")
    assert placed.requests is pending.requests


def test_a_different_spec_is_parsed_for_itself(parses: list[int]) -> None:
    small = Pod.from_dict(_raw("a", cpu="100m"))
    large = Pod.from_dict(_raw("b", cpu="2"))
    assert len(parses) == 2
    assert (small.requests["cpu"], large.requests["cpu"]) == (100, 2000)


def test_an_equal_spec_in_another_key_order_parses_the_same(parses: list[int]) -> None:
    raw = _raw("a")
    reordered = copy.deepcopy(raw)
    reordered["spec"] = dict(reversed(list(raw["spec"].items())))
    reordered["metadata"]["name"] = "b"
    first, second = Pod.from_dict(raw), Pod.from_dict(reordered)
    assert len(parses) == 2
    assert second.requests == first.requests
    assert second.tolerations == first.tolerations
    assert second.node_selector == first.node_selector


def test_a_bad_spec_is_reported_for_every_pod_that_has_it(parses: list[int]) -> None:
    bad = _raw("a")
    bad["spec"]["tolerations"] = "everything"
    for name in ("a", "b"):
        bad["metadata"]["name"] = name
        with pytest.raises(InvalidObjectError, match=f"Pod ns/{name}: spec.tolerations"):
            Pod.from_dict(bad)
    assert len(parses) == 2


def test_a_spec_that_is_not_plain_json_is_parsed_every_time(parses: list[int]) -> None:
    # An object built in memory may hold values JSON has not (here a key that is no string).
    raw = _raw("a")
    raw["spec"]["extra"] = {1: datetime.date(2026, 1, 1)}
    Pod.from_dict(raw)
    Pod.from_dict(raw)
    assert len(parses) == 2


def test_the_memo_forgets_the_oldest_spec_first(
    parses: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(pod_spec_fields, "MEMO_SIZE", 2)
    for cpu in ("1", "2", "3"):
        Pod.from_dict(_raw("p", cpu=cpu))
    assert len(parses) == 3
    Pod.from_dict(_raw("p", cpu="3"))
    assert len(parses) == 3
    Pod.from_dict(_raw("p", cpu="1"))
    assert len(parses) == 4
