"""How the candidate's view of a pod compares with the node the pod was actually bound to.

"Agree" is defined honestly, and narrowly:
- `same_node`: the candidate's tie-break would certainly pick the production node, because it
  is the only node with the highest total score;
- `tied_best`: the production node is among several nodes sharing the highest total, so the
  candidate might have picked it (its tie-break is random, as upstream's is).

Everything else is a disagreement, with the reason the candidate would have decided otherwise:
- `lower_score`: the production node passes the candidate's filters but scores below its best;
- `filtered`: a candidate Filter (or PreFilter) rejects the production node; `plugin` names it;
- `unschedulable`: the candidate finds no feasible node at all;
- `not_evaluated`: the candidate sampled nodes (`percentageOfNodesToScore`) and never looked
  at the production node; nothing can be said about it;
- `error`: a candidate plugin failed on the pod.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from scheduler.app.shadow.evaluate import Evaluation


class Verdict(StrEnum):
    SAME_NODE = "same_node"
    TIED_BEST = "tied_best"
    LOWER_SCORE = "lower_score"
    FILTERED = "filtered"
    UNSCHEDULABLE = "unschedulable"
    NOT_EVALUATED = "not_evaluated"
    ERROR = "error"

    @property
    def agrees(self) -> bool:
        return self in (Verdict.SAME_NODE, Verdict.TIED_BEST)


@dataclass(frozen=True, slots=True)
class Comparison:
    """One pod: where it went, what the candidate preferred, and why they differ."""

    pod: str
    scheduler_name: str
    bound_node: str
    verdict: Verdict
    # The candidate's best nodes (several when tied), empty when none is feasible.
    candidate_nodes: tuple[str, ...]
    # The rejecting plugin for `filtered`, else "".
    plugin: str = ""
    reason: str = ""

    def as_json(self) -> dict[str, object]:
        return {
            "pod": self.pod,
            "schedulerName": self.scheduler_name,
            "boundNode": self.bound_node,
            "verdict": str(self.verdict),
            "agrees": self.verdict.agrees,
            "candidateNodes": list(self.candidate_nodes),
            "plugin": self.plugin,
            "reason": self.reason,
        }


def compare(pod: str, scheduler_name: str, bound_node: str, evaluation: Evaluation) -> Comparison:
    best = tuple(evaluation.best)

    def verdict(kind: Verdict, reason: str, plugin: str = "") -> Comparison:
        return Comparison(pod, scheduler_name, bound_node, kind, best, plugin, reason)

    if evaluation.error:
        return verdict(Verdict.ERROR, evaluation.error)
    score = evaluation.scores.get(bound_node)
    if score is not None:
        top = evaluation.scores[best[0]]
        if best == (bound_node,):
            return verdict(Verdict.SAME_NODE, "")
        if score == top:
            return verdict(Verdict.TIED_BEST, f"{len(best)} nodes share the best score {top}")
        return verdict(
            Verdict.LOWER_SCORE, f"{bound_node} scores {score}, {', '.join(best)} score {top}"
        )
    rejection = evaluation.rejections.get(bound_node)
    if rejection is not None:
        plugin, message = rejection
        return verdict(Verdict.FILTERED, f"{bound_node}: {message}", plugin)
    if not evaluation.scores:
        return verdict(Verdict.UNSCHEDULABLE, evaluation.fit_error)
    return verdict(Verdict.NOT_EVALUATED, f"{bound_node} was not among the sampled nodes")
