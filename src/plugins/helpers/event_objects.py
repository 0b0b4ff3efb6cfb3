"""Typed access to the objects a QueueingHint receives (upstream's util.As), and the hint of
plugins that only the rejected pod's own update can help."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypeVar

from scheduler.framework.events import QueueingHint
from scheduler.objects.node import Node
from scheduler.objects.pod import Pod

View = TypeVar("View", Pod, Node)


def _expect(obj: object, kind: type[View], what: str) -> View:
    if not isinstance(obj, kind):
        raise TypeError(f"expected {what}, got {type(obj).__name__}")
    return obj


def _change(old: object, new: object, kind: type[View]) -> tuple[View | None, View]:
    event = f"a {kind.__name__} event"
    after = _expect(new, kind, f"the new object of {event}")
    before = None if old is None else _expect(old, kind, f"the old object of {event}")
    return before, after


def node_change(old: object, new: object) -> tuple[Node | None, Node]:
    """(old node or None for an Add, new node) of a Node event."""
    return _change(old, new, Node)


def pod_change(old: object, new: object) -> tuple[Pod | None, Pod]:
    """(old pod or None for an Add, new pod) of a Pod add or update event."""
    return _change(old, new, Pod)


def deleted_pod(old: object, new: object) -> Pod:
    """The pod a Pod delete event is about (the old object)."""
    return _expect(old, Pod, "the deleted pod of a Pod event")


def as_view(obj: object, kind: type[View]) -> View | None:
    """One side of an event as a `kind` view, for hints that take any side of any event:
    None (the missing side) stays None and a raw API object is parsed; TypeError otherwise."""
    if obj is None or isinstance(obj, kind):
        return obj
    if isinstance(obj, Mapping):
        return kind.from_dict(obj)
    raise TypeError(f"expected a {kind.__name__}, got {type(obj).__name__}")


def after_own_update(pod: Pod, old: object, new: object) -> QueueingHint:
    """Queue only for an update of the rejected pod itself (a Pod update event's hint)."""
    _, updated = pod_change(old, new)
    return QueueingHint.QUEUE if updated.uid == pod.uid else QueueingHint.QUEUE_SKIP
