"""HTTP scheduler extenders, called as kube-scheduler calls them: filter, prioritize, preempt
and bind."""

from scheduler.runtime.extenders.chain import ExtenderChain
from scheduler.runtime.extenders.chain import FilterOutcome
from scheduler.runtime.extenders.chain import scaled_score
from scheduler.runtime.extenders.extender import HTTPExtender
from scheduler.runtime.extenders.transport import ExtenderCallError

__all__ = ["ExtenderCallError", "ExtenderChain", "FilterOutcome", "HTTPExtender", "scaled_score"]
