"""NodeAffinityArgs: node affinity the profile adds to every pod."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import Field
from pydantic import field_validator

from scheduler.framework import PluginArgs
from scheduler.objects.labels import SelectorError
from scheduler.objects.node_selector import NodeAffinity
from scheduler.objects.node_selector import parse_node_affinity
from scheduler.objects.node_selector import parse_node_selector

_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


_MALFORMED = (SelectorError, TypeError, AttributeError, ValueError, KeyError)


def parse_added_affinity(raw: Mapping[str, Any] | None) -> NodeAffinity | None:
    """Parse a v1.NodeAffinity; ValueError names the section that is wrong and why."""
    if raw is None:
        return None
    unknown = sorted(set(raw) - {_REQUIRED, _PREFERRED})
    if unknown:
        raise ValueError(f"unknown field(s): {', '.join(unknown)}")
    try:
        required = parse_node_selector(raw.get(_REQUIRED))
    except _MALFORMED as exc:
        raise ValueError(f"{_REQUIRED}: {exc}") from exc
    try:
        preferred_only = parse_node_affinity({_PREFERRED: raw.get(_PREFERRED)})
    except _MALFORMED as exc:
        raise ValueError(f"{_PREFERRED}: {exc}") from exc
    preferred = preferred_only.preferred if preferred_only is not None else ()
    if required is None and not preferred:
        return None
    return NodeAffinity(required, preferred)


class NodeAffinityArgs(PluginArgs):
    """`addedAffinity` is ANDed with every pod's own node affinity in this profile."""

    added_affinity: dict[str, Any] | None = Field(default=None, alias="addedAffinity")

    @field_validator("added_affinity")
    @classmethod
    def _parses(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        parse_added_affinity(value)
        return value
