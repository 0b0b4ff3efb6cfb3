"""Host-port conflicts between what a pod wants and what a node already uses."""

from __future__ import annotations

from collections.abc import Iterable

from scheduler.objects.pod_ports import HostPort


def ports_conflict(wanted: Iterable[HostPort], in_use: Iterable[HostPort]) -> bool:
    """True if any wanted (hostIP, protocol, port) clashes with one in use.

    A wildcard host IP (0.0.0.0) clashes with every IP on the same protocol and port.
    """
    used = tuple(in_use)
    return any(want.conflicts(other) for want in wanted for other in used)
