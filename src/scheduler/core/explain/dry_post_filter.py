"""PostFilter without consequences.

The scheduler's PostFilter plugins act: preemption deletes victims, DynamicResources
deallocates a claim. `explain` wants only the decision. A plugin that can plan without acting
(it has `plan`, as DefaultPreemption does) is asked for its plan, which is recorded with its
candidates and victims. Any other PostFilter plugin runs as it is; what it would do it starts
through `Handle.start_background`, and `explain` cancels those tasks before they can run
(`cluster_state.cancel_background`), while the read-only client refuses any direct write.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from typing import Generic
from typing import Protocol
from typing import TypeVar
from typing import runtime_checkable

from scheduler.core.explain.model import PostFilterReport
from scheduler.core.explain.model import PreemptionCandidate
from scheduler.core.explain.model import Victim
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.plugins import NodeStatusReader
from scheduler.framework.plugins import PostFilterPlugin
from scheduler.framework.plugins import PostFilterResult
from scheduler.framework.status import Status
from scheduler.objects.pod import Pod
from scheduler.runtime.profile import Profile


class _Victims(Protocol):
    @property
    def pods(self) -> Sequence[Pod]: ...

    @property
    def num_pdb_violations(self) -> int: ...


class _Candidate(Protocol):
    @property
    def node_name(self) -> str: ...

    @property
    def victims(self) -> _Victims: ...


class _Plan(Protocol):
    @property
    def result(self) -> PostFilterResult | None: ...

    @property
    def status(self) -> Status: ...

    @property
    def candidates(self) -> Sequence[_Candidate]: ...


@runtime_checkable
class PlanningPostFilter(Protocol):
    """A PostFilter plugin that can say what it would do without doing it."""

    name: str

    def plan(self, state: CycleState, pod: Pod, statuses: NodeStatusReader) -> _Plan: ...


def candidates_of(plan: _Plan) -> list[PreemptionCandidate]:
    return [
        PreemptionCandidate(
            node=c.node_name,
            victims=tuple(Victim(v.key, v.priority) for v in c.victims.pods),
            pdb_violations=c.victims.num_pdb_violations,
        )
        for c in plan.candidates
    ]


_Wrapped = TypeVar("_Wrapped", PlanningPostFilter, PostFilterPlugin)


class _StandIn(Generic[_Wrapped]):
    """Takes a PostFilter plugin's place under its name; what it decides goes to `reports`."""

    def __init__(self, plugin: _Wrapped, reports: list[PostFilterReport]) -> None:
        self.name = plugin.name
        self._plugin: _Wrapped = plugin
        self._reports = reports


class _Planned(_StandIn[PlanningPostFilter]):
    """Stands in for a planning plugin: returns its plan's result and keeps the plan."""

    def post_filter(
        self, state: CycleState, pod: Pod, statuses: NodeStatusReader
    ) -> tuple[PostFilterResult | None, Status]:
        plan = self._plugin.plan(state, pod, statuses)
        nominated = plan.result.nominated_node_name if plan.result is not None else ""
        self._reports.append(
            PostFilterReport(
                plugin=self.name,
                code=plan.status.code.label,
                message=plan.status.message(),
                nominated_node=nominated,
                candidates=candidates_of(plan),
            )
        )
        return plan.result, plan.status


class _Recorded(_StandIn[PostFilterPlugin]):
    """Runs a plugin that cannot plan and records what it said."""

    def post_filter(
        self, state: CycleState, pod: Pod, statuses: NodeStatusReader
    ) -> tuple[PostFilterResult | None, Status]:
        result, status = self._plugin.post_filter(state, pod, statuses)
        nominated = result.nominated_node_name if result is not None else ""
        report = PostFilterReport(self.name, status.code.label, status.message(), nominated)
        report.dry_run = False
        self._reports.append(report)
        return result, status


_P = TypeVar("_P", bound=Profile)


def dry_profile(profile: _P, reports: list[PostFilterReport]) -> _P:
    """A shallow copy of `profile` whose PostFilter plugins only report into `reports`."""
    dry = copy.copy(profile)
    stand_ins: list[PostFilterPlugin] = []
    for plugin in profile.post_filter:
        if isinstance(plugin, PlanningPostFilter):
            stand_ins.append(_Planned(plugin, reports))
        else:
            stand_ins.append(_Recorded(plugin, reports))
    dry.post_filter = stand_ins
    return dry
