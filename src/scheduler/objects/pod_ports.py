"""The host ports a pod's containers ask the node for."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from scheduler.objects.integers import bounded_int


@dataclass(frozen=True, slots=True)
class HostPort:
    """A (hostIP, protocol, hostPort) a container asks the node for."""

    host_ip: str
    protocol: str
    port: int

    def conflicts(self, other: HostPort) -> bool:
        if self.port != other.port or self.protocol != other.protocol:
            return False
        wildcard = ("", "0.0.0.0")
        return (
            self.host_ip in wildcard or other.host_ip in wildcard or (self.host_ip == other.host_ip)
        )


def host_ports(spec: Mapping[str, Any]) -> tuple[HostPort, ...]:
    """The ports that name a hostPort of the containers that run as long as the pod: sidecars
    (init containers with restartPolicy Always) first, then the containers. A plain init
    container has finished before the containers start, so its ports are free again."""
    ports: list[HostPort] = []
    sidecars = [c for c in spec.get("initContainers") or () if c.get("restartPolicy") == "Always"]
    containers = [*sidecars, *(spec.get("containers") or ())]
    for container in containers:
        for port in container.get("ports") or ():
            host_port = bounded_int(port.get("hostPort") or 0, 32, "hostPort")
            if host_port <= 0:
                continue
            ip = str(port.get("hostIP") or "0.0.0.0")
            ports.append(HostPort(ip, str(port.get("protocol") or "TCP"), host_port))
    return tuple(ports)
