"""The in-memory cluster: an API store with versions, watches, bindings, Leases and Events."""

from scheduler.cluster.resource_kinds import BUILTIN_KINDS, ResourceKind
from scheduler.cluster.sim.cluster import SYSTEM_NAMESPACES, SimCluster

__all__ = ["BUILTIN_KINDS", "SYSTEM_NAMESPACES", "ResourceKind", "SimCluster"]
