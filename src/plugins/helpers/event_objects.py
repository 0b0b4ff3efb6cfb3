"""Typed access to the objects a QueueingHint receives (upstream's util.As)."""

from __future__ import annotations

from scheduler.objects.node import Node
from scheduler.objects.pod import Pod


def node_change(old: object, new: object) -> tuple[Node | None, Node]:
    """(old node or None for an Add, new node) of a Node event."""
    if not isinstance(new, Node):
        raise TypeError(f"expected the new object of a Node event, got {type(new).__name__}")
    if old is not None and not isinstance(old, Node):
        raise TypeError(f"expected the old object of a Node event, got {type(old).__name__}")
    return old, new


def pod_change(old: object, new: object) -> tuple[Pod | None, Pod]:
    """(old pod or None for an Add, new pod) of a Pod add or update event."""
    if not isinstance(new, Pod):
        raise TypeError(f"expected the new object of a Pod event, got {type(new).__name__}")
    if old is not None and not isinstance(old, Pod):
        raise TypeError(f"expected the old object of a Pod event, got {type(old).__name__}")
    return old, new


def deleted_pod(old: object, new: object) -> Pod:
    """The pod a Pod delete event is about (the old object)."""
    if not isinstance(old, Pod):
        raise TypeError(f"expected the deleted pod of a Pod event, got {type(old).__name__}")
    return old
