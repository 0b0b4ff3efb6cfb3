"""Field selector parsing and matching over dotted paths."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.cluster.sim.field_selector import parse_field_selector
from scheduler.framework.errors import APIError
from scheduler.testing import make_node
from scheduler.testing import make_pod

PENDING = make_pod("pending").scheduler("mine").dict()
BOUND = make_pod("bound").node("n1").phase("Running").dict()
DONE = make_pod("done").node("n1").phase("Succeeded").dict()
COMMA = make_pod("odd").label("x", "y").dict()
COMMA["spec"]["schedulerName"] = "a,b"
CORDONED = make_node("n1").unschedulable().dict()


@pytest.mark.parametrize(
    ("selector", "obj", "expected"),
    [
        ("spec.nodeName=", PENDING, True),
        ("spec.nodeName=", BOUND, False),
        ("spec.nodeName!=", BOUND, True),
        ("spec.nodeName==n1", BOUND, True),
        ("spec.nodeName=n2", BOUND, False),
        ("status.phase!=Succeeded,status.phase!=Failed", BOUND, True),
        ("status.phase!=Succeeded,status.phase!=Failed", DONE, False),
        ("spec.schedulerName=mine,spec.nodeName=", PENDING, True),
        ("spec.schedulerName=mine,spec.nodeName=", BOUND, False),
        ("metadata.name=bound, metadata.namespace=default", BOUND, True),
        (r"spec.schedulerName=a\,b", COMMA, True),
        ("spec.unschedulable=true", CORDONED, True),
        ("spec.unschedulable=true", make_node("n2").dict(), False),
        ("spec.missing.deeper=", BOUND, True),
        ("", DONE, True),
    ],
    ids=lambda value: value if isinstance(value, str) else None,
)
def test_selector_matches(selector: str, obj: dict[str, Any], expected: bool) -> None:
    assert parse_field_selector(selector).matches(obj) is expected


@pytest.mark.parametrize("selector", ["spec.nodeName", "=x", "a!b"], ids=str)
def test_a_malformed_selector_is_a_bad_request(selector: str) -> None:
    with pytest.raises(APIError) as raised:
        parse_field_selector(selector)
    assert raised.value.status == 400
    assert selector in raised.value.text
