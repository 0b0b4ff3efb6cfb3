"""The in-memory cluster: an API store with versions, watches, bindings, Leases and Events."""

from scheduler.cluster.resource_kinds import BUILTIN_KINDS
from scheduler.cluster.resource_kinds import ResourceKind
from scheduler.cluster.sim.cluster import SYSTEM_NAMESPACES
from scheduler.cluster.sim.cluster import SimCluster

__all__ = ["BUILTIN_KINDS", "SYSTEM_NAMESPACES", "ResourceKind", "SimCluster"]
