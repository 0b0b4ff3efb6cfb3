"""Malformed API objects: the error names the kind, the object and the field, and keeps the
cause."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from scheduler.objects.errors import InvalidObjectError
from scheduler.objects.errors import read_object
from scheduler.objects.node import Node
from scheduler.objects.pod import Pod


def _name(raw: Mapping[str, Any]) -> str:
    return str(raw.get("name"))


def test_read_object_returns_what_parse_returns() -> None:
    assert read_object("Thing", {"name": "a", "size": "3"}, lambda r: int(r["size"]), _name) == 3


@pytest.mark.parametrize(
    "bad",
    [
        lambda r: int(r["size"]),  # ValueError
        lambda r: r["missing"],  # LookupError
        lambda r: r["size"] + 1,  # TypeError
        lambda r: r.nothing,  # AttributeError
        lambda r: 1 // 0,  # ArithmeticError
    ],
)
def test_every_reading_error_names_the_object_and_keeps_its_cause(bad: Any) -> None:
    with pytest.raises(InvalidObjectError, match=r"^Thing a: ") as caught:
        read_object("Thing", {"name": "a", "size": "x"}, bad, _name)
    assert caught.value.__cause__ is not None


def test_an_error_that_is_not_about_reading_passes_through() -> None:
    def interrupted(raw: Mapping[str, Any]) -> int:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        read_object("Thing", {}, interrupted, _name)


def test_a_bad_pod_is_named_by_namespace_and_name() -> None:
    raw = {"metadata": {"name": "p", "namespace": "ns", "labels": {"a": 1}}, "spec": {}}
    with pytest.raises(InvalidObjectError, match=r"^Pod ns/p: metadata\.labels"):
        Pod.from_dict(raw)
    with pytest.raises(InvalidObjectError, match=r"^Pod <no metadata>: "):
        Pod.from_dict({"metadata": "p", "spec": {}})


def test_a_bad_node_is_named_by_name() -> None:
    raw = {"metadata": {"name": "n"}, "spec": {"taints": "none"}}
    with pytest.raises(InvalidObjectError, match=r"^Node n: "):
        Node.from_dict(raw)
    with pytest.raises(InvalidObjectError, match=r"^Node \?: "):
        Node.from_dict({"metadata": 5})
