"""IPAllocationArgs: how hard PreBind tries against write conflicts, and how often the leader
checks the pools' allocations against the pods."""

from __future__ import annotations

from pydantic import Field

from scheduler.framework import PluginArgs


class IPAllocationArgs(PluginArgs):
    # Attempts at one pool write (allocation or release) before the pod's attempt fails; each
    # 409 re-reads the pool and tries again.
    max_conflict_retries: int = Field(8, ge=1, le=100)
    # How often the leader releases allocations whose pod is gone or no longer carries them.
    reconcile_interval_seconds: float = Field(10.0, gt=0.0, le=3600.0)
