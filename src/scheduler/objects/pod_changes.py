"""A pod's new version derived from its old one when the change touches nothing else parsed.

Most changes a scheduler sees to a pod it placed are the Binding coming back (`spec.nodeName`
set, a `PodScheduled` condition, a new resourceVersion). Parsing the whole pod again for that
costs as much as the first parse; comparing the rest of the object with the old version costs a
few dict comparisons. Where the rest is equal, every field `Pod.from_dict` derives is too, so
the old parse is reused with the node, the version and the raw object replaced.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any
from typing import Final

from scheduler.objects import shapes
from scheduler.objects.pod import Pod

# What may differ, per section, for the old parse to stand; everything else must be equal.
_SPEC_CHANGES = frozenset({"nodeName"})
_METADATA_CHANGES = frozenset({"resourceVersion", "managedFields"})
_STATUS_CHANGES = frozenset({"conditions"})
_SECTIONS = frozenset({"spec", "metadata", "status"})


def rebased(old: Pod, new_raw: Mapping[str, Any]) -> Pod | None:
    """`new_raw` parsed, by way of `old` when only the node, conditions or resourceVersion
    changed; None when anything else did (parse it whole then)."""
    old_raw = old.raw
    if not (
        _same_but(old_raw, new_raw, _SECTIONS)
        and _same_but(old_raw.get("spec"), new_raw.get("spec"), _SPEC_CHANGES)
        and _same_but(old_raw.get("metadata"), new_raw.get("metadata"), _METADATA_CHANGES)
        and _same_but(old_raw.get("status"), new_raw.get("status"), _STATUS_CHANGES)
    ):
        return None
    try:
        # The part of the status that changed is still checked as a full parse checks it;
        # a full parse then reports what is wrong.
        shapes.pod_status(new_raw.get("status"))
    except (ValueError, TypeError):
        return None
    spec = new_raw.get("spec") or {}
    meta = new_raw.get("metadata") or {}
    return copied(
        old,
        node_name=str(spec.get("nodeName") or ""),
        resource_version=str(meta.get("resourceVersion") or ""),
        raw=new_raw,
    )


# Pod's slots, read and written directly: `dataclasses.replace` re-runs the frozen __init__
# with every field by keyword, which costs about twice as much, once or twice per scheduled pod.
_SLOTS_BY_NAME: Final = {f.name: getattr(Pod, f.name) for f in dataclasses.fields(Pod)}
_SLOTS: Final = tuple(_SLOTS_BY_NAME.values())


def copied(pod: Pod, **changes: Any) -> Pod:
    """`dataclasses.replace(pod, **changes)`, for fields a Pod does not derive others from
    (spec.nodeName, the resourceVersion, the raw object a parse stands for)."""
    copy = object.__new__(Pod)
    for slot in _SLOTS:
        slot.__set__(copy, slot.__get__(pod))
    for name, value in changes.items():
        _SLOTS_BY_NAME[name].__set__(copy, value)
    return copy


def _same_but(old: Any, new: Any, changing: frozenset[str]) -> bool:
    """Whether two sections are equal apart from the keys in `changing` (both must be
    objects, or both absent)."""
    if old is None or new is None:
        return old is new
    if not isinstance(old, Mapping) or not isinstance(new, Mapping):
        return False
    # Key by key, without copying either section: this runs for every pod a Binding confirms.
    for key, value in old.items():
        if key not in changing and (key not in new or new[key] != value):
            return False
    return all(key in old or key in changing for key in new)


# What a new version of a pod may change and still take the same room on the same node.
_VERSION_FIELDS = frozenset({"resource_version", "raw"})
_PLACED_SLOTS: Final = tuple(
    slot for name, slot in _SLOTS_BY_NAME.items() if name not in _VERSION_FIELDS
)


def same_but_version(a: Pod, b: Pod) -> bool:
    """Whether two versions of a pod differ at most in their resourceVersion and raw object,
    so everything derived from them (node, requests, labels, terms) is the same."""
    for slot in _PLACED_SLOTS:
        left, right = slot.__get__(a), slot.__get__(b)
        if left is not right and left != right:
            return False
    return True
