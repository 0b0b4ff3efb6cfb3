"""What every workload controller does alike: read its object, and stamp pods from the template
with the labels, annotations and controller reference that tie them to it."""

from __future__ import annotations

import copy
import random
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from scheduler.cluster.sim.meta import new_uid
from scheduler.framework.errors import ConfigError
from scheduler.objects.raw import DEFAULT_NAMESPACE


@dataclass(frozen=True, slots=True)
class Owner:
    """A workload object as its controller sees it."""

    raw: dict[str, Any]

    @property
    def kind(self) -> str:
        return str(self.raw["kind"])

    @property
    def name(self) -> str:
        return str(self.raw["metadata"]["name"])

    @property
    def namespace(self) -> str:
        return str(self.raw["metadata"].get("namespace") or DEFAULT_NAMESPACE)

    @property
    def uid(self) -> str:
        return str(self.raw["metadata"]["uid"])

    @property
    def spec(self) -> Mapping[str, Any]:
        spec = self.raw.get("spec")
        if spec is None:
            return {}
        if not isinstance(spec, Mapping):
            raise self.error("spec", "must be an object")
        return spec

    def error(self, field: str, message: str) -> ConfigError:
        return ConfigError(f"{self.kind} {self.namespace}/{self.name}: {field}: {message}")

    def count(self, field: str, default: int) -> int:
        """A non-negative integer field of the spec (replicas, parallelism, ...)."""
        value = self.spec.get(field, default)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise self.error(f"spec.{field}", f"must be a non-negative integer, got {value!r}")
        return value

    def template(self) -> Mapping[str, Any]:
        template = self.spec.get("template")
        if not isinstance(template, Mapping) or not isinstance(template.get("spec"), Mapping):
            raise self.error("spec.template.spec", "Required value")
        return template

    def reference(self) -> dict[str, Any]:
        """The controller reference its children carry."""
        return {
            "apiVersion": str(self.raw["apiVersion"]),
            "kind": self.kind,
            "name": self.name,
            "uid": self.uid,
            "controller": True,
            "blockOwnerDeletion": True,
        }

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.kind, self.namespace, self.name)


def controller_of(child: Mapping[str, Any]) -> tuple[str, str, str] | None:
    """The (kind, namespace, name) of the object controlling `child`, if one does."""
    meta = child.get("metadata") or {}
    for ref in meta.get("ownerReferences") or ():
        if ref.get("controller"):
            return (
                str(ref.get("kind")),
                str(meta.get("namespace") or DEFAULT_NAMESPACE),
                str(ref.get("name")),
            )
    return None


def object_key(obj: Mapping[str, Any]) -> tuple[str, str, str]:
    meta = obj.get("metadata") or {}
    return (
        str(obj.get("kind")),
        str(meta.get("namespace") or DEFAULT_NAMESPACE),
        str(meta.get("name")),
    )


def with_uid(raw: Mapping[str, Any], rng: random.Random) -> Owner:
    """The object with a uid (kept if given), so its children can reference it before it is
    created, as the API server would have assigned one long before the controller ran."""
    obj = copy.deepcopy(dict(raw))
    meta = obj.setdefault("metadata", {})
    meta.setdefault("uid", new_uid(rng))
    return Owner(obj)


def stamp_pod(
    owner: Owner,
    template: Mapping[str, Any],
    name: str,
    *,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A pod from `template`, named `name`, in the owner's namespace and controlled by it."""
    meta = template.get("metadata") or {}
    pod_labels = {**(meta.get("labels") or {}), **(labels or {})}
    pod_annotations = {**(meta.get("annotations") or {}), **(annotations or {})}
    metadata: dict[str, Any] = {
        "name": name,
        "namespace": owner.namespace,
        "ownerReferences": [owner.reference()],
    }
    if pod_labels:
        metadata["labels"] = pod_labels
    if pod_annotations:
        metadata["annotations"] = pod_annotations
    if meta.get("finalizers"):
        metadata["finalizers"] = list(meta["finalizers"])
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": copy.deepcopy(dict(template["spec"])),
    }
