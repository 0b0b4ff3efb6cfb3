"""A profile: one schedulerName's plugin chains, built from its effective configuration."""

from __future__ import annotations

import time
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from typing import TypeVar

from scheduler.config import EffectiveProfile
from scheduler.framework.args import PluginArgs
from scheduler.framework.contract import extension_problems
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.errors import PluginLoadError
from scheduler.framework.events import EXTENDER_REJECTOR
from scheduler.framework.events import ActionType
from scheduler.framework.events import ClusterEvent
from scheduler.framework.events import ClusterEventWithHint
from scheduler.framework.events import EventResource
from scheduler.framework.handle import Handle
from scheduler.framework.plugins import BatchFilterPlugin
from scheduler.framework.plugins import BatchScorePlugin
from scheduler.framework.plugins import BindPlugin
from scheduler.framework.plugins import FilterPlugin
from scheduler.framework.plugins import PermitPlugin
from scheduler.framework.plugins import Plugin
from scheduler.framework.plugins import PostBindPlugin
from scheduler.framework.plugins import PostFilterPlugin
from scheduler.framework.plugins import PreBindPlugin
from scheduler.framework.plugins import PreBindPreFlightPlugin
from scheduler.framework.plugins import PreEnqueuePlugin
from scheduler.framework.plugins import PreFilterPlugin
from scheduler.framework.plugins import PreScorePlugin
from scheduler.framework.plugins import QueueSortPlugin
from scheduler.framework.plugins import ReservePlugin
from scheduler.framework.plugins import ScoreExtensions
from scheduler.framework.plugins import ScorePlugin
from scheduler.framework.spec import PluginSpec
from scheduler.framework.status import SUCCESS
from scheduler.framework.status import Status
from scheduler.objects.pod import Pod
from scheduler.runtime import invoke
from scheduler.runtime.metrics_port import EvaluationCounter
from scheduler.runtime.metrics_port import NoMetrics
from scheduler.runtime.metrics_port import RuntimeMetrics
from scheduler.runtime.node_filter import FilterChain
from scheduler.runtime.waiting_pods import WaitingPods

T = TypeVar("T")

# Extension points at which a plugin can reject a pod, and so may need events to requeue it.
_REJECTING_POINTS = ("PreEnqueue", "PreFilter", "Filter", "Reserve", "Permit")
# Extension points whose plugins' runs scheduler_plugin_evaluation_total counts.
_EVALUATED_POINTS = ("PreFilter", "Filter", "PreScore", "Score")
# The registrations of a rejector that cannot say what helps (a plugin without
# `events_to_register`, the HTTP extenders): as upstream's, every change to each resource
# kube-scheduler watches by default, with no hint (always Queue). Changes to other kinds
# (PodDisruptionBudgets, ResourceSlices, Namespaces, ...) do not retry such a pod, nor does the
# five-minute flush of the unschedulable pods take a pod such a plugin holds at PreEnqueue
# (that flush is a wildcard event, which only a wildcard registration matches). Upstream adds
# PodGroup only under the alpha GenericWorkload gate, off by default.
_UNKNOWN_NEEDS = tuple(
    ClusterEventWithHint(ClusterEvent(resource, ActionType.ALL))
    for resource in (
        EventResource.POD,
        EventResource.NODE,
        EventResource.PERSISTENT_VOLUME,
        EventResource.PERSISTENT_VOLUME_CLAIM,
        EventResource.CSI_NODE,
        EventResource.CSI_DRIVER,
        EventResource.CSI_STORAGE_CAPACITY,
        EventResource.STORAGE_CLASS,
        EventResource.RESOURCE_CLAIM,
        EventResource.DEVICE_CLASS,
    )
)
# Added, with no hint, for each plugin that registers node additions but not taint changes.
_NODE_TAINT_UPDATE = ClusterEventWithHint(
    ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_TAINT)
)


@dataclass(frozen=True, slots=True)
class FilterEntry:
    plugin: FilterPlugin
    batch: BatchFilterPlugin | None


@dataclass(frozen=True, slots=True)
class ScoreEntry:
    plugin: ScorePlugin
    batch: BatchScorePlugin | None
    extensions: ScoreExtensions | None
    weight: int


class Profile:
    """Plugin instances of one profile, grouped by extension point in run order."""

    def __init__(
        self,
        effective: EffectiveProfile,
        registry: Mapping[str, PluginSpec],
        handle: Handle,
        waiting_pods: WaitingPods,
        metrics: RuntimeMetrics | None = None,
        *,
        vectorize: bool = True,
    ) -> None:
        """`vectorize=False` ignores batch forms (benchmarks compare the two executors)."""
        self.name = effective.scheduler_name
        self.effective = effective
        self.handle = handle
        self.waiting_pods = waiting_pods
        self.metrics = metrics or NoMetrics()
        # Each (plugin, extension point)'s evaluation counter, looked up once.
        self._evaluations: dict[tuple[str, str], EvaluationCounter] = {}
        self.percentage_of_nodes_to_score = effective.percentage_of_nodes_to_score
        self.plugins: dict[str, Plugin] = {}
        for point in effective.plugins.values():
            for ref in point:
                if ref.name not in self.plugins:
                    args: PluginArgs | None = effective.plugin_args.get(ref.name)
                    self.plugins[ref.name] = registry[ref.name].create(args, handle)
        points = effective.plugins
        _check_extensions(self.plugins, points)

        def chain(point: str) -> list[Plugin]:
            return [self.plugins[ref.name] for ref in points.get(point, ())]

        self.pre_enqueue = [p for p in chain("PreEnqueue") if isinstance(p, PreEnqueuePlugin)]
        sorts = [p for p in chain("QueueSort") if isinstance(p, QueueSortPlugin)]
        self.queue_sort: QueueSortPlugin | None = sorts[0] if sorts else None
        self.pre_filter = [p for p in chain("PreFilter") if isinstance(p, PreFilterPlugin)]
        self.filter = [
            FilterEntry(p, p if vectorize and isinstance(p, BatchFilterPlugin) else None)
            for p in chain("Filter")
            if isinstance(p, FilterPlugin)
        ]
        self.post_filter = [p for p in chain("PostFilter") if isinstance(p, PostFilterPlugin)]
        self.pre_score = [p for p in chain("PreScore") if isinstance(p, PreScorePlugin)]
        self.score = [
            ScoreEntry(
                p,
                p if vectorize and isinstance(p, BatchScorePlugin) else None,
                p.score_extensions(),
                ref.weight,
            )
            for ref in points.get("Score", ())
            if isinstance(p := self.plugins[ref.name], ScorePlugin)
        ]
        self.reserve = [p for p in chain("Reserve") if isinstance(p, ReservePlugin)]
        self.permit = [p for p in chain("Permit") if isinstance(p, PermitPlugin)]
        self.pre_bind = [p for p in chain("PreBind") if isinstance(p, PreBindPlugin)]
        # Each PreBind plugin with its PreBindPreFlight (None if it has none), looked up once:
        # a Protocol check per pod costs more than the pre-flight itself.
        self.pre_bind_pre_flights = [
            (p, p.pre_bind_pre_flight if isinstance(p, PreBindPreFlightPlugin) else None)
            for p in self.pre_bind
        ]
        self.bind = [p for p in chain("Bind") if isinstance(p, BindPlugin)]
        self.post_bind = [p for p in chain("PostBind") if isinstance(p, PostBindPlugin)]
        self.chain = FilterChain(self.pre_filter, [e.plugin for e in self.filter], self)
        self.vectorized = all(e.batch is not None for e in self.filter) and all(
            e.batch is not None for e in self.score
        )
        # kube-scheduler makes the evaluation series of every PreFilter, Filter, PreScore and
        # Score plugin with the profile: each reads 0 from the start, so a rate over it counts
        # the first evaluations after a restart and a table by plugin lists the idle ones.
        for counted in _EVALUATED_POINTS:
            for ref in points.get(counted, ()):
                self._evaluation_counter(ref.name, counted)

    def queueing_hints(self, *, extenders: bool = False) -> list[tuple[str, ClusterEventWithHint]]:
        """Event registrations of every rejector a pod of this profile can have: each plugin
        that can reject it and, when the scheduler consults HTTP extenders, the extenders."""
        registrations: list[tuple[str, ClusterEventWithHint]] = []
        if extenders:
            registrations.extend((EXTENDER_REJECTOR, event) for event in _UNKNOWN_NEEDS)
        for name in self._rejecting_plugin_names():
            registrations.extend((name, event) for event in self._registrations_of(name))
        return registrations

    def _rejecting_plugin_names(self) -> list[str]:
        """Each plugin enabled at an extension point that can reject a pod, once."""
        points = self.effective.plugins
        return list(
            dict.fromkeys(ref.name for point in _REJECTING_POINTS for ref in points.get(point, ()))
        )

    def _registrations_of(self, name: str) -> list[ClusterEventWithHint]:
        register = getattr(self.plugins[name], "events_to_register", None)
        # Without a registration, every kind kube-scheduler watches may help, as upstream assumes.
        events = (
            [_guarded(name, e) for e in register()] if callable(register) else [*_UNKNOWN_NEEDS]
        )
        if _watches_node_adds_but_not_taints(events):
            # kube-scheduler retries such a plugin's pods on every taint change too (a stopgap
            # for kubernetes#109437, from when a node's Add could skip the hints); so do we, so
            # that the same events retry the same pods.
            events.append(_NODE_TAINT_UPDATE)
        return events

    def run_pre_enqueue(self, pod: Pod, gating_plugin: str = "", *, timed: bool = False) -> Status:
        """The first rejection, trying first `gating_plugin`, the plugin that held the pod last
        time (as upstream does: while it still holds the pod, no other plugin is asked).
        `timed` records each plugin's duration."""
        started = time.perf_counter()
        try:
            for plugin in self._pre_enqueue_order(gating_plugin):
                plugin_started = time.perf_counter() if timed else 0.0
                status = invoke.call_status("PreEnqueue", plugin.name, plugin.pre_enqueue, pod)
                if timed:
                    elapsed = time.perf_counter() - plugin_started
                    self.metrics.plugin_execution_duration(
                        plugin.name, "PreEnqueue", status.code.label, elapsed
                    )
                if not status.is_success:
                    return status.with_plugin(plugin.name)
            return Status()
        finally:
            # Upstream labels every PreEnqueue observation Success, whatever the plugins said
            # (its deferred recorder reads a status that is never assigned); so do we, so
            # that the series are the same.
            self.observe("PreEnqueue", Status(), started)

    def _pre_enqueue_order(self, gating_plugin: str) -> list[PreEnqueuePlugin]:
        plugins = self.pre_enqueue
        if not gating_plugin or not plugins or plugins[0].name == gating_plugin:
            return plugins
        first = [p for p in plugins if p.name == gating_plugin]
        return first + [p for p in plugins if p.name != gating_plugin]

    def observed_point(self, point: str, run: Callable[[], T]) -> T:
        """`run` one whole extension point that raises PluginError on a failure (Filter,
        Score), its duration recorded with Success or with the failure's status."""
        started = time.perf_counter()
        try:
            result = run()
        except invoke.PluginError as error:
            self.observe(point, error.status, started)
            raise
        self.observe(point, SUCCESS, started)
        return result

    def observe(self, point: str, status: Status, started: float) -> None:
        self.metrics.extension_point_duration(
            point, status.code.label, self.name, time.perf_counter() - started
        )

    def observe_plugin(
        self,
        state: CycleState,
        plugin: str,
        point: str,
        status: Status,
        started: float,
        *,
        evaluated: int = 1,
        rejected: Mapping[str, int] | None = None,
    ) -> None:
        """One plugin's run at `point`; `evaluated` counts the nodes a Filter or Score run
        covered, as upstream counts one evaluation per node. Of those, `rejected` gives how
        many nodes a Filter run rejected with each code, and `status` is the others'. A plugin
        that answered Skip was timed but not evaluated, as upstream counts it."""
        if not status.is_skip:
            self._evaluation_counter(plugin, point)(evaluated)
        if not state.record_plugin_metrics:
            return
        # Upstream times each node's Filter and Score call, labelled with its own code; a
        # vectorized run covered `evaluated` of them at once, each taking an equal share.
        share = (time.perf_counter() - started) / evaluated if evaluated else 0.0
        passed = evaluated
        for label, nodes in (rejected or {}).items():
            passed -= nodes
            self.metrics.plugin_execution_duration(plugin, point, label, share * nodes, nodes)
        if passed:
            self.metrics.plugin_execution_duration(
                plugin, point, status.code.label, share * passed, passed
            )

    def count_evaluation(self, plugin: str, point: str) -> None:
        """One call of a plugin outside the executor (a dry run, a node with nominated pods)."""
        self._evaluation_counter(plugin, point)(1)

    def _evaluation_counter(self, plugin: str, point: str) -> EvaluationCounter:
        count = self._evaluations.get((plugin, point))
        if count is None:
            count = self.metrics.plugin_evaluation_counter(plugin, point, self.name)
            self._evaluations[(plugin, point)] = count
        return count

    def observe_duration(
        self, state: CycleState, plugin: str, point: str, status: Status, started: float
    ) -> None:
        """One plugin's run at `point`, timed in the cycles the sampler picked
        (`scheduler_plugin_execution_duration_seconds`, every extension point upstream times)."""
        if state.record_plugin_metrics:
            self.metrics.plugin_execution_duration(
                plugin, point, status.code.label, time.perf_counter() - started
            )


def _watches_node_adds_but_not_taints(registrations: list[ClusterEventWithHint]) -> bool:
    node_actions = ActionType(0)
    for registration in registrations:
        if registration.event.resource is EventResource.NODE:
            node_actions |= registration.event.action
    return bool(node_actions & ActionType.ADD) and not node_actions & ActionType.UPDATE_NODE_TAINT


def _guarded(plugin: str, registration: ClusterEventWithHint) -> ClusterEventWithHint:
    if registration.hint is None:
        return registration
    return ClusterEventWithHint(registration.event, invoke.guarded_hint(plugin, registration.hint))


def _check_extensions(plugins: Mapping[str, Plugin], points: Mapping[str, Any]) -> None:
    """The objects `score_extensions()` and `pre_filter_extensions()` return keep the contract
    (checked once, at start-up, so that a bad one never fails a pod)."""
    for point in ("Score", "PreFilter"):
        for ref in points.get(point, ()):
            problems = extension_problems(plugins[ref.name], point)
            if problems:
                raise PluginLoadError(f'plugin "{ref.name}" {"; ".join(problems)}')
