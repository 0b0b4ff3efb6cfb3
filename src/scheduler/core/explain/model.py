"""What `explain` found for one pod: plain data, rendered as a table or as JSON.

The JSON form (`to_json`) is the documented schema of `explain -o json`; see
docs/explain.md. Field names are camelCase like the Kubernetes API's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from scheduler.framework.status import Code

# Outcomes of the scheduler's own run of the profile on the pod.
SCHEDULABLE = "Schedulable"
UNSCHEDULABLE = "Unschedulable"
ERROR = "Error"
# Outcomes of a pod the scheduler does not try: a PreEnqueue plugin holds it out of the queue,
# or it is being deleted (the scheduler pops it and skips it).
GATED = "Gated"
SKIPPED = "Skipped"
# A pod that passes every Filter but that Permit holds at its node, with nothing in the
# snapshot to release it: it waits until the plugin's timeout rejects it.
WAITING = "Waiting"

# How the pod's Permit ends (`PermitReport.result`).
ALLOWED = "Allowed"
REJECTED = "Rejected"
TIMES_OUT = "TimesOut"
NOT_REACHED = "NotReached"  # Reserve failed, so Permit did not run


@dataclass(frozen=True, slots=True)
class Verdict:
    """One plugin's (or the whole chain's) answer for one node."""

    plugin: str
    code: str  # Success, Unschedulable, UnschedulableAndUnresolvable, Error, Skip
    reasons: tuple[str, ...] = ()
    # What the plugin adds for explain alone (`FilterDetails`): the why behind its reasons.
    details: tuple[str, ...] = ()

    @property
    def passed(self) -> bool:
        return self.code == Code.SUCCESS.label

    def to_json(self) -> dict[str, Any]:
        return {
            "plugin": self.plugin,
            "code": self.code,
            "reasons": list(self.reasons),
            "details": list(self.details),
        }


@dataclass(frozen=True, slots=True)
class NodeReport:
    """A node: the scheduler's verdict, and every Filter plugin's answer on its own."""

    name: str
    verdict: Verdict
    plugins: tuple[Verdict, ...]

    @property
    def feasible(self) -> bool:
        return self.verdict.passed


@dataclass(frozen=True, slots=True)
class PluginScore:
    plugin: str
    raw: int
    normalized: int
    weight: int

    @property
    def weighted(self) -> int:
        return self.normalized * self.weight


@dataclass(frozen=True, slots=True)
class NodeScore:
    node: str
    plugins: tuple[PluginScore, ...]

    @property
    def total(self) -> int:
        return sum(p.weighted for p in self.plugins)


@dataclass(frozen=True, slots=True)
class Victim:
    pod: str
    priority: int


@dataclass(frozen=True, slots=True)
class PreemptionCandidate:
    node: str
    victims: tuple[Victim, ...]
    pdb_violations: int


@dataclass(slots=True)
class PostFilterReport:
    """What PostFilter said; preemption is planned only, never carried out."""

    plugin: str
    code: str
    message: str
    nominated_node: str = ""
    candidates: list[PreemptionCandidate] = field(default_factory=list)
    # False for a plugin that cannot plan: it ran, and what it started was cancelled.
    dry_run: bool = True


@dataclass(frozen=True, slots=True)
class Companion:
    """A pod that Permit brought forward for the explained one (a gang's sibling), taken
    through the same cycle after it, in turn."""

    pod: str
    outcome: str  # Schedulable, Waiting, Unschedulable, Error or Gated
    node: str
    message: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(slots=True)
class PermitReport:
    """Reserve and Permit at the chosen node (the pod assumed there, as the scheduler does),
    and, when Permit makes it wait, the pods it brought forward and how the wait ends."""

    node: str
    result: str  # Allowed, Rejected, TimesOut or NotReached
    # Reserve's failure; None when Reserve passed.
    reserve: Verdict | None = None
    plugins: list[Verdict] = field(default_factory=list)
    # Seconds each plugin that answered Wait asked for (capped at 15 minutes, as upstream's).
    timeouts: dict[str, float] = field(default_factory=dict)
    companions: list[Companion] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "result": self.result,
            "reserve": self.reserve.to_json() if self.reserve is not None else None,
            "plugins": [
                {**v.to_json(), "timeoutSeconds": self.timeouts.get(v.plugin)} for v in self.plugins
            ],
            "companions": [c.to_json() for c in self.companions],
        }


@dataclass(frozen=True, slots=True)
class Reported:
    """The pod's PodScheduled condition: what a scheduler last wrote on it, and since when."""

    status: str
    reason: str
    message: str
    since: str  # lastTransitionTime, as written

    @classmethod
    def of(cls, raw: Mapping[str, Any]) -> Reported | None:
        for condition in (raw.get("status") or {}).get("conditions") or ():
            if isinstance(condition, dict) and condition.get("type") == "PodScheduled":
                return cls(
                    str(condition.get("status") or ""),
                    str(condition.get("reason") or ""),
                    str(condition.get("message") or ""),
                    str(condition.get("lastTransitionTime") or ""),
                )
        return None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Fix:
    """A change to the pod that was applied to a copy of it and re-filtered before showing."""

    kind: str  # resources, toleration, nodeSelector, nodeAffinity, priority
    summary: str
    nodes: tuple[str, ...]  # nodes that pass every Filter once the change is made
    patch: dict[str, Any]  # a JSON merge patch (RFC 7386) of the pod

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "summary": self.summary,
            "nodes": list(self.nodes),
            "patch": self.patch,
        }


@dataclass(slots=True)
class Explanation:
    pod: str
    profile: str
    outcome: str
    # The text the scheduler's FailedScheduling Event carries for this state ("" if it fits).
    message: str
    chosen_node: str = ""
    # The PreEnqueue plugin holding the pod out of the queue (outcome Gated), else None.
    gate: Verdict | None = None
    pre_filter: list[Verdict] = field(default_factory=list)
    filter_plugins: list[str] = field(default_factory=list)
    nodes: list[NodeReport] = field(default_factory=list)
    scores: list[NodeScore] = field(default_factory=list)
    post_filter: list[PostFilterReport] = field(default_factory=list)
    # Reserve and Permit at the chosen node; None when no node was chosen.
    permit: PermitReport | None = None
    # The pod's PodScheduled condition as explain found it; None if it has none (no
    # scheduler has written on the pod yet), and its creationTimestamp, to tell how long.
    reported: Reported | None = None
    created: str = ""
    # The node a bound pod is on; it is explained as if it were pending ("" for a pending pod).
    bound_to: str = ""
    fixes: list[Fix] = field(default_factory=list)
    # Background work plugins asked for during the run (e.g. a claim's deallocation), which
    # was cancelled before it could start.
    cancelled_actions: list[str] = field(default_factory=list)

    def node(self, name: str) -> NodeReport:
        return next(n for n in self.nodes if n.name == name)

    def histogram(self) -> dict[str, int]:
        """Nodes per rejection reason, as the FailedScheduling text counts them."""
        counts: dict[str, int] = {}
        for report in self.nodes:
            for reason in report.verdict.reasons if not report.feasible else ():
                counts[reason] = counts.get(reason, 0) + 1
        return counts

    def to_json(self) -> dict[str, Any]:
        return {
            "pod": self.pod,
            "profile": self.profile,
            "outcome": self.outcome,
            "message": self.message,
            "chosenNode": self.chosen_node,
            "gate": self.gate.to_json() if self.gate is not None else None,
            "preFilter": [v.to_json() for v in self.pre_filter],
            "filterPlugins": list(self.filter_plugins),
            "nodes": [
                {
                    "name": n.name,
                    "feasible": n.feasible,
                    "verdict": n.verdict.to_json(),
                    "plugins": [v.to_json() for v in n.plugins],
                }
                for n in self.nodes
            ],
            "scores": [
                {
                    "node": s.node,
                    "total": s.total,
                    "plugins": [
                        {
                            "plugin": p.plugin,
                            "raw": p.raw,
                            "normalized": p.normalized,
                            "weight": p.weight,
                            "weighted": p.weighted,
                        }
                        for p in s.plugins
                    ],
                }
                for s in self.scores
            ],
            "postFilter": [
                {
                    "plugin": r.plugin,
                    "code": r.code,
                    "message": r.message,
                    "dryRun": r.dry_run,
                    "nominatedNode": r.nominated_node,
                    "candidates": [
                        {
                            "node": c.node,
                            "pdbViolations": c.pdb_violations,
                            "victims": [{"pod": v.pod, "priority": v.priority} for v in c.victims],
                        }
                        for c in r.candidates
                    ],
                }
                for r in self.post_filter
            ],
            "permit": self.permit.to_json() if self.permit is not None else None,
            "podScheduled": self.reported.to_json() if self.reported is not None else None,
            "created": self.created,
            "boundTo": self.bound_to,
            "fixes": [f.to_json() for f in self.fixes],
            "cancelledActions": list(self.cancelled_actions),
        }
