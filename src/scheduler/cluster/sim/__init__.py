"""The in-memory cluster: an API store with versions, watches, bindings, Leases and Events."""

from scheduler.cluster.sim.cluster import SYSTEM_NAMESPACES, SimCluster
from scheduler.cluster.sim.kinds import BUILTIN_KINDS, ResourceKind

__all__ = ["BUILTIN_KINDS", "SYSTEM_NAMESPACES", "ResourceKind", "SimCluster"]
