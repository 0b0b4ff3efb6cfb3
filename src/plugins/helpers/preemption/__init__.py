"""Preemption shared by the plugins that preempt: the evaluator and its parts (the dry run,
disruption budgets, the order of importance, the choice among candidates, the texts and the
background work). A preempting plugin supplies a `Preemptor` of its own decisions."""

from plugins.helpers.preemption.disruption_budgets import PDB_RESOURCE
from plugins.helpers.preemption.disruption_budgets import DisruptionBudget
from plugins.helpers.preemption.disruption_budgets import split_by_violation
from plugins.helpers.preemption.eligibility import PREEMPT_NEVER
from plugins.helpers.preemption.eligibility import ineligibility
from plugins.helpers.preemption.evaluator import Evaluator
from plugins.helpers.preemption.evaluator import PreemptingPostFilter
from plugins.helpers.preemption.evaluator import PreemptionPlan
from plugins.helpers.preemption.evaluator import Preemptor
from plugins.helpers.preemption.importance import least_important_first
from plugins.helpers.preemption.importance import reprieve_order
from plugins.helpers.preemption.messages import NOT_ELIGIBLE_POLICY_NEVER
from plugins.helpers.preemption.messages import NOT_ELIGIBLE_TERMINATING
from plugins.helpers.preemption.messages import WAITING_FOR_PREEMPTION
from plugins.helpers.preemption.victims import NO_VICTIMS_FOUND
from plugins.helpers.preemption.victims import DryRunNode
from plugins.helpers.preemption.victims import extension_error
from plugins.helpers.preemption.victims import reprieve
from plugins.helpers.preemption.victims import select_victims
from scheduler.framework import Victims

__all__ = [
    "NOT_ELIGIBLE_POLICY_NEVER",
    "NOT_ELIGIBLE_TERMINATING",
    "NO_VICTIMS_FOUND",
    "PDB_RESOURCE",
    "PREEMPT_NEVER",
    "WAITING_FOR_PREEMPTION",
    "DisruptionBudget",
    "DryRunNode",
    "Evaluator",
    "PreemptingPostFilter",
    "PreemptionPlan",
    "Preemptor",
    "Victims",
    "extension_error",
    "ineligibility",
    "least_important_first",
    "reprieve",
    "reprieve_order",
    "select_victims",
    "split_by_violation",
]
