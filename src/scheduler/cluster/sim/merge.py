"""Copying and patching objects that are shared, never mutated.

Stored objects are immutable by convention, so a write builds new dicts along the changed paths
and shares every untouched subtree with the previous version; that keeps writes and watch
fan-out cheap without defensive deep copies.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

_SCALARS = frozenset({str, int, float, bool, type(None)})


def clone(value: Any) -> Any:
    """A deep copy of JSON-shaped data (dicts, lists, scalars); much cheaper than deepcopy.

    Exact type checks come first: this runs for every field of every object written, and an
    isinstance check against an abstract base class costs several times more.
    """
    kind = type(value)
    if kind is dict:
        return {str(k): clone(v) for k, v in value.items()}
    if kind in _SCALARS:
        return value
    if kind is list or kind is tuple:
        return [clone(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): clone(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [clone(v) for v in value]
    return value


def clone_object(obj: Mapping[str, Any]) -> dict[str, Any]:
    """A deep copy of one API object."""
    return {str(k): clone(v) for k, v in obj.items()}


def merge_patch(target: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """RFC 7386 JSON merge patch: maps merge, None removes a key, anything else replaces."""
    result = dict(target)
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        elif isinstance(value, Mapping):
            current = result.get(key)
            result[key] = merge_patch(current if isinstance(current, Mapping) else {}, value)
        else:
            result[key] = clone(value)
    return result


def merge_status(status: Mapping[str, Any], patch: Mapping[str, Any]) -> dict[str, Any]:
    """A merge patch of a status where `conditions` merge by `type`, as the API's strategic
    merge patch does, instead of replacing the whole list."""
    conditions = patch.get("conditions")
    plain = {k: v for k, v in patch.items() if k != "conditions"}
    result = merge_patch(status, plain)
    if "conditions" in patch:
        if conditions is None:
            result.pop("conditions", None)
        else:
            result["conditions"] = merge_conditions(status.get("conditions") or (), conditions)
    return result


def merge_conditions(
    existing: Sequence[Mapping[str, Any]], patch: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """Conditions of `patch` merge into the existing condition of the same type, or append."""
    merged = [dict(c) for c in existing]
    position = {str(c.get("type")): i for i, c in enumerate(merged)}
    for condition in patch:
        kind = str(condition.get("type"))
        if kind in position:
            merged[position[kind]] = merge_patch(merged[position[kind]], condition)
        else:
            position[kind] = len(merged)
            merged.append(merge_patch({}, condition))
    return merged


def set_condition(
    status: Mapping[str, Any], condition: Mapping[str, Any], now: str
) -> dict[str, Any]:
    """Set one condition by type; `lastTransitionTime` moves only when its status changes."""
    current = next(
        (c for c in status.get("conditions") or () if c.get("type") == condition["type"]), None
    )
    update = dict(condition)
    if current is None or current.get("status") != condition.get("status"):
        update["lastTransitionTime"] = now
    return merge_status(status, {"conditions": [update]})
