"""The part every object builder shares: metadata setters over a raw API dict, and the dict."""

from __future__ import annotations

import copy
from typing import Any
from typing import Self


class ObjectBuilder:
    """Builds one raw API object; subclasses add setters for their kind's fields."""

    def __init__(self, raw: dict[str, Any]) -> None:
        self._raw = raw

    @property
    def _meta(self) -> dict[str, Any]:
        meta: dict[str, Any] = self._raw["metadata"]
        return meta

    @property
    def _spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = self._raw.setdefault("spec", {})
        return spec

    def label(self, key: str, value: str) -> Self:
        self._meta.setdefault("labels", {})[key] = value
        return self

    def labels(self, **labels: str) -> Self:
        self._meta.setdefault("labels", {}).update(labels)
        return self

    def annotation(self, key: str, value: str) -> Self:
        self._meta.setdefault("annotations", {})[key] = value
        return self

    def version(self, resource_version: int) -> Self:
        self._meta["resourceVersion"] = str(resource_version)
        return self

    def dict(self) -> dict[str, Any]:
        """A copy of the object built so far; the builder can go on changing its own."""
        return copy.deepcopy(self._raw)
