"""A node's image list and declared features are read strictly: a wrong shape names the
field, not a crash later."""

from __future__ import annotations

import re
from typing import Any

import pytest

from scheduler.objects.errors import InvalidObjectError
from scheduler.objects.node import Node
from scheduler.testing import make_node


def node_with_images(images: Any) -> dict[str, Any]:
    raw = make_node("n0").dict()
    raw["status"]["images"] = images
    return raw


def test_image_names_and_sizes_are_read() -> None:
    node = Node.from_dict(node_with_images([{"names": ["nginx:1"], "sizeBytes": 10}]))
    assert [(i.names, i.size_bytes) for i in node.images] == [(("nginx:1",), 10)]


@pytest.mark.parametrize(
    ("images", "field"),
    [
        ([{"names": [["nginx"]]}], "status.images[].names"),
        ([{"names": "nginx"}], "status.images[].names"),
        (["nginx"], "status.images[0]"),
        ({"names": []}, "status.images"),
    ],
)
def test_a_malformed_image_list_names_the_field(images: Any, field: str) -> None:
    with pytest.raises(InvalidObjectError, match=re.escape(f"Node n0: {field}")):
        Node.from_dict(node_with_images(images))


def test_declared_features_are_read_and_must_be_names() -> None:
    raw = make_node("n0").declared_features("B", "A").dict()
    assert Node.from_dict(raw).declared_features == ("A", "B")
    raw["status"]["declaredFeatures"] = "A"
    with pytest.raises(InvalidObjectError, match=re.escape("Node n0: status.declaredFeatures")):
        Node.from_dict(raw)
