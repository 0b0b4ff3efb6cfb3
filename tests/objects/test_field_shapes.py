"""Shape checks of raw fields: a wrong type is reported by its field path when the object is
parsed, not later inside a plugin."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.objects import shapes


def test_string_maps() -> None:
    assert shapes.string_map(None, "metadata.labels") == {}
    assert shapes.string_map({"a": "b"}, "metadata.labels") == {"a": "b"}
    with pytest.raises(ValueError, match=r"^metadata\.labels: must be a map of strings$"):
        shapes.string_map(["a"], "metadata.labels")
    with pytest.raises(ValueError, match=r"^metadata\.labels: 'a': keys and values must be"):
        shapes.string_map({"a": 1}, "metadata.labels")


def test_object_lists() -> None:
    assert shapes.object_list(None, "spec.x") == ()
    assert shapes.object_list([{"a": 1}], "spec.x") == ({"a": 1},)
    with pytest.raises(ValueError, match=r"^spec\.x: must be a list$"):
        shapes.object_list("abc", "spec.x")
    with pytest.raises(ValueError, match=r"^spec\.x\[1\]: must be an object$"):
        shapes.object_list([{}, 3], "spec.x")


@pytest.mark.parametrize(
    ("constraint", "message"),
    [
        ({"maxSkew": 2**31}, r"topologySpreadConstraints\[0\]\.maxSkew: .* int32"),
        ({"maxSkew": 1, "minDomains": "two"}, r"\[0\]\.minDomains: 'two' is not an integer"),
        ({"maxSkew": 1, "topologyKey": 5}, r"\[0\]\.topologyKey: must be a string"),
        (
            {"maxSkew": 1, "matchLabelKeys": [1]},
            r"\[0\]\.matchLabelKeys: must be a list of strings",
        ),
        ({"maxSkew": 1, "labelSelector": "app=web"}, r"\[0\]\.labelSelector: must be an object"),
        (
            {"maxSkew": 1, "labelSelector": {"matchExpressions": [{"key": "a"}]}},
            r"\[0\]\.labelSelector: operator: Unsupported value",
        ),
    ],
)
def test_spread_constraints_name_the_bad_field(constraint: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        shapes.spread_constraints([constraint])


def test_a_well_formed_spread_constraint_passes() -> None:
    constraint = {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "DoNotSchedule"}
    assert shapes.spread_constraints([constraint]) == (constraint,)


def test_volume_sources_must_be_objects() -> None:
    shapes.volumes([{"name": "data", "persistentVolumeClaim": {"claimName": "c"}}])
    with pytest.raises(ValueError, match=r"^spec\.volumes\[0\]\.ephemeral: must be an object$"):
        shapes.volumes([{"name": "data", "ephemeral": "yes"}])


def test_pod_status_shape() -> None:
    shapes.pod_status(None)
    shapes.pod_status({"conditions": [{"type": "Ready"}], "startTime": "2026-01-01T00:00:00Z"})
    with pytest.raises(ValueError, match=r"^status: must be an object$"):
        shapes.pod_status("Running")
    with pytest.raises(ValueError, match=r"^status\.startTime: must be a string$"):
        shapes.pod_status({"startTime": 5})
