"""Reading fields of API objects kept as raw mappings (those the scheduler does not parse into
a type: claims, volumes, classes, custom resources).

A field the API leaves out, or sends as null, reads as empty here, so callers need not guard
each level of an object themselves.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

RawObject = Mapping[str, Any]
"""An API object as its JSON reads: the shape informers and the cluster port hand out."""

DEFAULT_NAMESPACE = "default"
"""The namespace a namespaced object is in when its metadata names none, as the API server and
kubectl default it."""

# The annotation that named a claim's or volume's class before spec.storageClassName existed;
# the API still honours it first.
BETA_STORAGE_CLASS = "volume.beta.kubernetes.io/storage-class"


def metadata_of(obj: RawObject) -> Mapping[str, Any]:
    """An object's metadata, or an empty mapping for one that has none (yet)."""
    meta: Mapping[str, Any] = obj.get("metadata") or {}
    return meta


def spec_of(obj: RawObject) -> Mapping[str, Any]:
    spec: Mapping[str, Any] = obj.get("spec") or {}
    return spec


def annotations_of(obj: RawObject) -> Mapping[str, str]:
    annotations: Mapping[str, str] = metadata_of(obj).get("annotations") or {}
    return annotations


def storage_class_of(obj: RawObject) -> str:
    """A PVC's or PV's class: the beta annotation wins over spec.storageClassName."""
    annotations = annotations_of(obj)
    if BETA_STORAGE_CLASS in annotations:
        return str(annotations[BETA_STORAGE_CLASS])
    return str(spec_of(obj).get("storageClassName") or "")
