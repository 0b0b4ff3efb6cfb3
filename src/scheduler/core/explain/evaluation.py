"""Running one pod through its profile the way the scheduler does, and keeping every answer.

Two runs over the same snapshot:

* the scheduler's own algorithm (`PlacementSearch.run`, the very code of a scheduling cycle, with
  PostFilter plugins only planning): its outcome, the FailedScheduling text and the chosen
  node are what the daemon would produce;
* a per-plugin run: PreFilter plugin by plugin, then every Filter plugin on every node (not
  stopping at the first rejection), the per-node verdict through the same per-node path the
  scheduler uses (nominated pods included), and every Score plugin's raw, normalized and
  weighted score on the feasible nodes.

Where the scheduler's run rejected a node, its recorded status is the node's verdict, so the
report can never disagree with the Event.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import replace

import numpy as np

from scheduler.core.explain.dry_post_filter import dry_profile
from scheduler.core.explain.model import ERROR
from scheduler.core.explain.model import GATED
from scheduler.core.explain.model import SCHEDULABLE
from scheduler.core.explain.model import SKIPPED
from scheduler.core.explain.model import UNSCHEDULABLE
from scheduler.core.explain.model import Explanation
from scheduler.core.explain.model import NodeReport
from scheduler.core.explain.model import NodeScore
from scheduler.core.explain.model import PluginScore
from scheduler.core.explain.model import PostFilterReport
from scheduler.core.explain.model import Verdict
from scheduler.core.outcome import Failure
from scheduler.core.placement_search import PlacementSearch
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.node_info import NodeInfo
from scheduler.framework.node_info import counted_nominations
from scheduler.framework.node_table import NodeTable
from scheduler.framework.plugins import FilterDetails
from scheduler.framework.plugins import FilterPlugin
from scheduler.framework.status import Code
from scheduler.framework.status import Status
from scheduler.objects.pod import Pod
from scheduler.runtime import invoke
from scheduler.runtime.framework import Framework
from scheduler.runtime.prefilter import PreFilterOutcome
from scheduler.runtime.prefilter import run_pre_filter
from scheduler.runtime.profile import Profile
from scheduler.runtime.scoring import normalize_scores
from scheduler.runtime.scoring import raw_scores
from scheduler.runtime.scoring import run_pre_score


def verdict_of(plugin: str, status: Status) -> Verdict:
    """`plugin` names who answered when the status does not ("" for a pass, which no plugin
    decides alone)."""
    reasons = status.reasons or ((status.message(),) if status.message() else ())
    said_by = status.plugin or ("" if status.is_success else plugin)
    return Verdict(said_by, status.code.label, tuple(reasons))


@dataclass(slots=True)
class ChainRun:
    """PreFilter once, then the scheduler's per-node Filter path on every node."""

    state: CycleState
    pre: PreFilterOutcome
    verdicts: dict[str, Verdict]

    @property
    def feasible(self) -> list[str]:
        return [name for name, v in self.verdicts.items() if v.passed]


def run_chain(profile: Profile, pod: Pod, table: NodeTable) -> ChainRun:
    """Every node's verdict for `pod` on a fresh cycle state (used for fixes, too)."""
    state = CycleState()
    pre = run_pre_filter(profile, state, pod, table)
    verdicts: dict[str, Verdict] = {}
    if not pre.status.is_success:
        rejected = verdict_of("PreFilter", pre.status)
        return ChainRun(state, pre, dict.fromkeys(table.names[: table.size], rejected))
    allowed = None
    if pre.result is not None and pre.result.node_names is not None:
        allowed = set(pre.result.node_names)
    narrowed_by = ", ".join(sorted(pre.narrowing_plugins))
    outside = Verdict(narrowed_by, "UnschedulableAndUnresolvable", (pre.unsatisfied_message(),))
    for row in range(table.size):
        info = table.node_infos[row]
        if allowed is not None and info.name not in allowed:
            verdicts[info.name] = outside
            continue
        nominated = profile.handle.nominated_pods_for_node(info.name)
        status = profile.chain.run_with_nominated(state, pod, info, nominated)
        verdicts[info.name] = verdict_of("", status)
    return ChainRun(state, pre, verdicts)


def _pre_filter_verdicts(profile: Profile, pod: Pod, table: NodeTable) -> list[Verdict]:
    """Each PreFilter plugin's own answer (the scheduler stops at an unresolvable one)."""
    state = CycleState()
    found = []
    for plugin in profile.pre_filter:
        result, status = invoke.pre_filter(plugin, state, pod, table)
        verdict = verdict_of(plugin.name, status.with_plugin(plugin.name))
        if status.is_success and result is not None and result.node_names is not None:
            names = ", ".join(sorted(result.node_names)) or "none"
            verdict = Verdict(plugin.name, verdict.code, (f"only nodes: {names}",))
        found.append(verdict)
    return found


@dataclass(frozen=True, slots=True)
class _NodeView:
    """A node as one Filter call sees it: its cycle state and pods, and which pods nominated
    to it were counted there (none for the node as it is)."""

    state: CycleState
    info: NodeInfo
    nominated: tuple[str, ...] = ()


def _views(profile: Profile, run: ChainRun, pod: Pod, info: NodeInfo) -> list[_NodeView]:
    """The node with the pods nominated to it (equal or higher priority) and without them: the
    scheduler's per-node path asks every plugin on both, so a plugin's column must too."""
    plain = _NodeView(run.state, info)
    relevant = counted_nominations(pod, profile.handle.nominated_pods_for_node(info.name))
    if not relevant:
        return [plain]
    state, crowded = run.state.clone(), info.clone()
    for other in relevant:
        crowded.add_pod(other)
        if not profile.chain.add_pod(state, pod, other, crowded).is_success:
            # The chain's own verdict reports that failure; the columns show the node alone.
            return [plain]
    return [_NodeView(state, crowded, tuple(p.key for p in relevant)), plain]


def _plugin_verdict(plugin: FilterPlugin, views: Sequence[_NodeView], pod: Pod) -> Verdict:
    """The plugin's first rejection over the views, or its pass."""
    name = plugin.name
    verdict = Verdict(name, Code.SUCCESS.label)
    for view in views:
        status = invoke.call_status("Filter", name, plugin.filter, view.state, pod, view.info)
        verdict = verdict_of(name, status.with_plugin(name))
        if status.is_success:
            continue
        details: tuple[str, ...] = ()
        if view.nominated:
            counted = ", ".join(view.nominated)
            details = (f"counting the pods nominated to this node: {counted}",)
        if isinstance(plugin, FilterDetails):
            details += invoke.call_for_lines(
                "FilterDetails", name, plugin.filter_details, view.state, pod, view.info
            )
        return replace(verdict, details=details)
    return verdict


def _plugin_verdicts(
    profile: Profile, run: ChainRun, pod: Pod, table: NodeTable, row: int
) -> tuple[Verdict, ...]:
    views = _views(profile, run, pod, table.node_infos[row])
    found = []
    for entry in profile.filter:
        name = entry.plugin.name
        if name in run.state.skip_filter_plugins:
            found.append(Verdict(name, "Skip"))
            continue
        found.append(_plugin_verdict(entry.plugin, views, pod))
    return tuple(found)


def _scores(profile: Profile, run: ChainRun, pod: Pod, table: NodeTable) -> list[NodeScore]:
    rows = np.array(
        sorted(r for name in run.feasible if (r := table.row_of(name)) is not None),
        dtype=np.int64,
    )
    if not len(rows) or not profile.score:
        return []
    state = run.state.clone()
    if not run_pre_score(profile, state, pod, table, rows).is_success:
        return []
    per_plugin: list[tuple[str, int, np.ndarray, np.ndarray]] = []
    for entry in profile.score:
        name = entry.plugin.name
        if name in state.skip_score_plugins:
            continue
        raw = raw_scores(entry, state, pod, table, rows)
        normalized = raw.copy()
        # Its status goes unchecked: a NormalizeScore failure is the scheduler's run's to
        # report (outcome and message); here the scores show as the plugin left them.
        normalize_scores(entry, state, pod, table, rows, normalized)
        per_plugin.append((name, entry.weight, raw, normalized))
    result = [
        NodeScore(
            table.names[int(row)],
            tuple(
                PluginScore(name, int(raw[i]), int(norm[i]), weight)
                for name, weight, raw, norm in per_plugin
            ),
        )
        for i, row in enumerate(rows.tolist())
    ]
    return sorted(result, key=lambda s: (-s.total, s.node))


def _not_tried(profile: Framework, pod: Pod, explanation: Explanation) -> None:
    """Say so when the scheduler would not try the pod at all. A pod held by PreEnqueue keeps
    the rest of its report: what the scheduler would do once the plugin lets it through. A pod
    being deleted is popped and skipped, with upstream's Event."""
    gate = profile.run_pre_enqueue(pod)
    if not gate.is_success:
        explanation.outcome = GATED
        explanation.gate = verdict_of("PreEnqueue", gate)
    elif pod.deleting:
        explanation.outcome = SKIPPED
        explanation.message = f"skip schedule deleting pod: {pod.key}"
        explanation.chosen_node = ""


def explain_pod(
    profile: Framework,
    pod: Pod,
    table: NodeTable,
    nominations: Mapping[str, Sequence[Pod]],
    state: CycleState | None = None,
) -> Explanation:
    """Everything but the fixes (see `fixes.py`) and what follows the choice of a node (see
    `permit_run.py`, which goes on from `state`, the search's cycle state). `nominations` are
    the queue's nominated pods by node name, as the scheduling cycle counts them."""
    reports: list[PostFilterReport] = []
    dry = dry_profile(profile, reports)
    search = PlacementSearch(dry, state or CycleState(), pod, table, nominations)
    outcome = search.run()
    explanation = Explanation(
        pod=pod.key,
        profile=profile.name,
        outcome=SCHEDULABLE,
        message="",
        pre_filter=_pre_filter_verdicts(profile, pod, table),
        filter_plugins=[e.plugin.name for e in profile.filter],
        post_filter=reports,
    )
    if isinstance(outcome, Failure):
        explanation.outcome = UNSCHEDULABLE if outcome.status.is_rejected else ERROR
        explanation.message = outcome.message
    else:
        explanation.chosen_node = outcome.node_name
    _not_tried(profile, pod, explanation)
    run = run_chain(profile, pod, table)
    diagnosis = outcome.diagnosis if isinstance(outcome, Failure) else None
    for row in range(table.size):
        name = table.names[row]
        verdict = run.verdicts[name]
        if diagnosis is not None:
            # The scheduler's own record for the node wins; it is what the Event counted.
            recorded = diagnosis.status_of_row(row)
            if recorded.code is not Code.SUCCESS:
                # A node outside PreFilter's result is recorded with no plugin: the chain's
                # verdict names the plugins that narrowed the set.
                verdict = verdict_of(verdict.plugin, recorded)
        plugins = (
            _plugin_verdicts(profile, run, pod, table, row) if run.pre.status.is_success else ()
        )
        explanation.nodes.append(NodeReport(name, verdict, plugins))
    if run.pre.status.is_success:
        try:
            explanation.scores = _scores(profile, run, pod, table)
        except invoke.PluginError:
            # A Score plugin failed: the scheduler's run (outcome and message) says so when it
            # scored; with a single feasible node it does not score, and neither is shown.
            explanation.scores = []
    return explanation
