"""Workload objects in a simulation: expanded into the pods (and claims) their controllers
would create, so a scenario can be written as it is deployed."""

from scheduler.app.workloads.expand import WORKLOAD_KINDS
from scheduler.app.workloads.expand import expand_workloads
from scheduler.app.workloads.expand import refuse_unexpanded
from scheduler.app.workloads.templates import check_pod_template

__all__ = ["WORKLOAD_KINDS", "check_pod_template", "expand_workloads", "refuse_unexpanded"]
