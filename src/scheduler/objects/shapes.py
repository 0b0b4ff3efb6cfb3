"""Shape checks of the API fields that are read later than an object is parsed.

`Pod.from_dict` and `Node.from_dict` parse most fields at once, so a bad value is reported by
name and the object skipped. Some fields stay raw because only some plugins read them, during
a scheduling cycle (spread constraints, volumes, conditions, owner references). A wrong type
there would surface inside a plugin, far from the object; these checks look at the types the
API guarantees, when the object is parsed, so the same rule holds for every field.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from scheduler.objects.integers import bounded_int
from scheduler.objects.labels import parse_label_selector


def string_map(value: Any, field: str) -> dict[str, str]:
    """A map of strings (labels, annotations, nodeSelector); absent is empty."""
    if not value:
        return {}
    if not isinstance(value, Mapping):
        raise ValueError(f"{field}: must be a map of strings")
    for key, item in value.items():
        if not isinstance(key, str) or not isinstance(item, str):
            raise ValueError(f"{field}: {key!r}: keys and values must be strings")
    return dict(value)


def object_list(value: Any, field: str) -> tuple[Mapping[str, Any], ...]:
    """A list of objects; absent is empty."""
    if not value:
        return ()
    if not isinstance(value, Sequence) or isinstance(value, str):
        raise ValueError(f"{field}: must be a list")
    for index, item in enumerate(value):
        if not isinstance(item, Mapping):
            raise ValueError(f"{field}[{index}]: must be an object")
    return tuple(value)


def mapping(value: Any, field: str) -> Mapping[str, Any]:
    """An object; absent is empty."""
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ValueError(f"{field}: must be an object")
    return value


def pod_spec(spec: Mapping[str, Any]) -> None:
    """The parts of a pod spec that parsing walks into, checked for type first, so that a
    wrong one is reported by its field path rather than as the Python error it would cause."""
    affinity = mapping(spec.get("affinity"), "spec.affinity")
    for key in ("nodeAffinity", "podAffinity", "podAntiAffinity"):
        mapping(affinity.get(key), f"spec.affinity.{key}")
    object_list(spec.get("tolerations"), "spec.tolerations")
    object_list(spec.get("schedulingGates"), "spec.schedulingGates")
    mapping(spec.get("resources"), "spec.resources")
    for group in ("containers", "initContainers"):
        for index, container in enumerate(object_list(spec.get(group), f"spec.{group}")):
            mapping(container.get("resources"), f"spec.{group}[{index}].resources")
            object_list(container.get("ports"), f"spec.{group}[{index}].ports")


def _optional_string(raw: Mapping[str, Any], key: str, field: str) -> None:
    value = raw.get(key)
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{field}.{key}: must be a string")


def spread_constraints(value: Any) -> tuple[Mapping[str, Any], ...]:
    field = "spec.topologySpreadConstraints"
    constraints = object_list(value, field)
    for index, raw in enumerate(constraints):
        where = f"{field}[{index}]"
        bounded_int(raw.get("maxSkew") or 0, 32, f"{where}.maxSkew")
        if raw.get("minDomains") is not None:
            bounded_int(raw["minDomains"], 32, f"{where}.minDomains")
        for key in ("topologyKey", "whenUnsatisfiable", "nodeAffinityPolicy", "nodeTaintsPolicy"):
            _optional_string(raw, key, where)
        keys = raw.get("matchLabelKeys") or ()
        if not isinstance(keys, Sequence) or not all(isinstance(k, str) for k in keys):
            raise ValueError(f"{where}.matchLabelKeys: must be a list of strings")
        selector = raw.get("labelSelector")
        if selector is not None and not isinstance(selector, Mapping):
            raise ValueError(f"{where}.labelSelector: must be an object")
        try:
            parse_label_selector(selector)
        except (ValueError, TypeError, AttributeError) as exc:
            raise ValueError(f"{where}.labelSelector: {exc}") from exc
    return constraints


def volumes(value: Any) -> None:
    """spec.volumes: objects whose sources (persistentVolumeClaim, ephemeral, ...) are objects."""
    for index, volume in enumerate(object_list(value, "spec.volumes")):
        _optional_string(volume, "name", f"spec.volumes[{index}]")
        for key, source in volume.items():
            if key != "name" and source is not None and not isinstance(source, Mapping):
                raise ValueError(f"spec.volumes[{index}].{key}: must be an object")


def pod_status(value: Any) -> None:
    if value is None:
        return
    if not isinstance(value, Mapping):
        raise ValueError("status: must be an object")
    object_list(value.get("conditions"), "status.conditions")
    _optional_string(value, "startTime", "status")
