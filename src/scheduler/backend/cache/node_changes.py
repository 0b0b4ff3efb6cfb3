"""What changed between two versions of a node, as far as the node table cares."""

from __future__ import annotations

from scheduler.objects.node import Node


def table_fields_differ(old: Node, new: Node) -> bool:
    """True if a row built from `new` would differ from one built from `old`.

    Nodes are updated every few seconds for heartbeats and conditions alone; rewriting the row
    then would bump the table's label version and throw away every memoized selector mask.
    """
    return (
        old.labels != new.labels
        or old.taints != new.taints
        or old.allocatable != new.allocatable
        or old.unschedulable != new.unschedulable
    )
