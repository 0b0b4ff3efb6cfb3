"""One Protocol per extension point. A plugin implements any subset of them.

Hot-path methods are synchronous; only PreBind, Bind and PostBind may await. The runtime
decides which extension points a plugin implements by the methods it defines, so a plugin is
a plain class with a `name` attribute and the methods it needs. Start-up checks each plugin
against the points it is enabled at (methods, companions, signatures; see `contract`).

What every extension point shares: a plugin that raises, returns the wrong type, or (Score)
returns a score that is not an integer in [0, 100] after NormalizeScore gets the same
treatment as one that returned `Status(Code.ERROR)`: the attempt fails with an Error naming the
plugin, the pod gets a FailedScheduling Event and PodScheduled=False (reason SchedulerError),
and it is retried after backoff. The scheduler itself keeps scheduling other pods.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Protocol
from typing import runtime_checkable

import numpy as np
import numpy.typing as npt

from scheduler.framework.batch import FilterBatch
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.events import ClusterEventWithHint
from scheduler.framework.node_info import NodeInfo
from scheduler.framework.node_table import NodeTable
from scheduler.framework.queued_pod import QueuedPodInfo
from scheduler.framework.status import Status
from scheduler.objects.pod import Pod

Rows = npt.NDArray[np.int64]
Scores = npt.NDArray[np.int64]


@runtime_checkable
class Plugin(Protocol):
    """Every plugin: a `name` (as configured in profiles) and `__init__(args, handle)`."""

    name: str


@dataclass(frozen=True, slots=True)
class PreFilterResult:
    """Nodes a PreFilter plugin narrows the search to; None means every node."""

    node_names: frozenset[str] | None = None

    @property
    def all_nodes(self) -> bool:
        return self.node_names is None

    def merge(self, other: PreFilterResult | None) -> PreFilterResult:
        if other is None or other.node_names is None:
            return self
        if self.node_names is None:
            return other
        return PreFilterResult(self.node_names & other.node_names)


class NominatingMode(Enum):
    """Whether a PostFilter result changes the pod's nominated node."""

    NOOP = "Noop"
    OVERRIDE = "Override"


@dataclass(frozen=True, slots=True)
class PostFilterResult:
    """What PostFilter (preemption) decided: the node the pod is nominated to, if any."""

    nominated_node_name: str = ""
    mode: NominatingMode = NominatingMode.OVERRIDE


class NodeStatusReader(Protocol):
    """Filter outcomes of the cycle, for PostFilter plugins."""

    def status_of(self, node_name: str) -> Status: ...

    def nodes_with_code(self, code: int) -> Sequence[str]: ...


@runtime_checkable
class PreEnqueuePlugin(Plugin, Protocol):
    """Gate a pod before it may enter the active queue (SchedulingGates is one).

    Return Success to let the pod in, or Unschedulable / UnschedulableAndUnresolvable to hold
    it; a held pod is reconsidered on the events this plugin registers (`EnqueueExtensions`).
    Error (or a fault) is logged and holds the pod like a rejection. The plugin that holds a
    pod is asked first the next time; while it still holds the pod, no other is asked. Called
    from informer events: keep it cheap and never block.
    """

    def pre_enqueue(self, pod: Pod) -> Status: ...


@runtime_checkable
class QueueSortPlugin(Plugin, Protocol):
    """Order the active queue: `less(a, b)` is True when `a` must be scheduled before `b`.

    Exactly one is enabled, the same in every profile. A `less` that raises or returns a
    non-bool is logged and that comparison falls back to priority, then age.

    A plugin may also have `sort_key(info)`: a value per pod whose `<` agrees with `less`
    exactly and that never raises. The active queue then compares the keys it took when each
    pod entered or changed, which costs far less than calling `less`.
    """

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool: ...


class PreFilterExtensions(Protocol):
    """Keeps PreFilter state right when pods are hypothetically added to or removed from a node.

    Success continues; anything else fails the evaluation with an Error.
    """

    def add_pod(
        self, state: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo
    ) -> Status: ...

    def remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status: ...


@runtime_checkable
class PreFilterPlugin(Plugin, Protocol):
    """Compute per-pod state once per attempt (in `state`) and optionally narrow the nodes.

    Returns (result, status). `result` may name the only nodes worth filtering (None: all).
    Success continues; Skip skips this plugin's Filter for the attempt; Unschedulable records
    the rejection (preemption may still help); UnschedulableAndUnresolvable ends the attempt
    as unschedulable at once; Error fails the attempt. `pre_filter_extensions()` is required:
    return None, or an object whose add_pod/remove_pod keep the state right when preemption
    simulates removing victims.
    """

    def pre_filter(
        self, state: CycleState, pod: Pod, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status]: ...

    def pre_filter_extensions(self) -> PreFilterExtensions | None: ...


@runtime_checkable
class FilterPlugin(Plugin, Protocol):
    """Can the pod run on this node? Called per node, possibly many thousand times a cycle.

    Success keeps the node; Unschedulable rejects it (preemption may help by removing pods);
    UnschedulableAndUnresolvable rejects it for good (preemption skips the node); Error fails
    the whole attempt. Read what PreFilter stored in `state`; do no I/O here.
    """

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status: ...


@runtime_checkable
class BatchFilterPlugin(Plugin, Protocol):
    """Optional vectorized Filter over table rows; must agree with `filter` row by row."""

    def filter_nodes(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows
    ) -> FilterBatch: ...


@runtime_checkable
class FilterDetails(Plugin, Protocol):
    """Optional, read by `explain` only: why Filter rejected the node, in more words than its
    Status can hold (the Status's reasons are counted in FailedScheduling, so they stay the
    upstream texts). Called after `filter` with the same state; it must only read."""

    def filter_details(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Sequence[str]: ...


@runtime_checkable
class PostFilterPlugin(Plugin, Protocol):
    """Runs only when no node fits (DefaultPreemption is one), in order until one succeeds.

    Success (with a nominated node in the result) ends the chain; Unschedulable passes to
    the next plugin, its message appended to the FailedScheduling text; Error fails the
    attempt with that Error. `statuses` tells why each node was rejected.
    """

    def post_filter(
        self, state: CycleState, pod: Pod, statuses: NodeStatusReader
    ) -> tuple[PostFilterResult | None, Status]: ...


@runtime_checkable
class AwaitingPostFilterPlugin(PostFilterPlugin, Protocol):
    """A PostFilter plugin that may await the HTTP extenders (`Handle.extenders`), as
    preemption asks those with a preempt verb about its candidates.

    For a pod some extender is interested in, the attempt already awaits (the cache stands
    still meanwhile), and the scheduler calls `post_filter_awaiting` instead of `post_filter`;
    for every other pod it calls `post_filter`. Both answer as `post_filter` does.
    """

    async def post_filter_awaiting(
        self, state: CycleState, pod: Pod, statuses: NodeStatusReader
    ) -> tuple[PostFilterResult | None, Status]: ...


@runtime_checkable
class PreScorePlugin(Plugin, Protocol):
    """Prepare Score state once per attempt for the feasible `rows` of `table`.

    Success continues; Skip skips this plugin's Score for the attempt; anything else (a
    rejection too) fails the attempt with an Error.
    """

    def pre_score(self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows) -> Status: ...


class ScoreExtensions(Protocol):
    """NormalizeScore: rescale one Score plugin's raw scores once they are all known."""

    def normalize_score(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows, scores: Scores
    ) -> Status:
        """Rewrite `scores` (aligned with `rows`) in place into [0, 100]."""
        ...


@runtime_checkable
class ScorePlugin(Plugin, Protocol):
    """Rank a feasible node: (score, status), the score an integer.

    After NormalizeScore (if `score_extensions()` returns an object) every score must lie
    in [MIN_NODE_SCORE, MAX_NODE_SCORE] = [0, 100]; the weighted sum picks the node. Any
    status but Success, a score out of range, NaN or a non-integer fails the attempt with an
    Error. `score_extensions()` is required: return None when scores are already in range.
    """

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]: ...

    def score_extensions(self) -> ScoreExtensions | None: ...


@runtime_checkable
class BatchScorePlugin(Plugin, Protocol):
    """Optional vectorized Score; must agree with `score` row by row."""

    def score_nodes(self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows) -> Scores: ...


@runtime_checkable
class ReservePlugin(Plugin, Protocol):
    """Claim what the pod will use on the chosen node before binding starts (cache-side).

    Success continues; a rejection or Error fails the attempt. Whenever the attempt fails
    after Reserve ran (at Reserve, Permit, PreBind or Bind), `unreserve` is called on every
    Reserve plugin in reverse order, whether or not its own `reserve` ran: it must be
    idempotent and must give back what `reserve` took. A failing `unreserve` is logged only.
    """

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status: ...

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None: ...


@runtime_checkable
class PermitPlugin(Plugin, Protocol):
    """Approve, reject or delay binding: (status, timeout seconds).

    Success allows; Unschedulable rejects (the pod is unreserved and retried on events);
    Wait holds the pod until a plugin calls `allow`/`reject` on the WaitingPod from the
    Handle or the timeout ends (then it is rejected); Error fails the attempt.
    """

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, float]:
        """Success, a rejection, or Wait with a timeout in seconds (capped at 15 minutes)."""
        ...


@runtime_checkable
class PreBindPlugin(Plugin, Protocol):
    """Do what must happen before the Binding (provision volumes, call an API); async.

    Success or Skip continue; a rejection or Error (an API call that raises, a 403 from
    RBAC) unreserves the pod and retries it after backoff with a FailedScheduling Event.
    Runs in the binding cycle, off the scheduling loop: waiting here delays only this pod.
    """

    async def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status: ...


@runtime_checkable
class PreBindPreFlightPlugin(PreBindPlugin, Protocol):
    """A PreBind plugin that says, before the binding cycle waits at Permit, whether its
    PreBind will do any work for this pod on this node; synchronous, on the event loop.

    Success: it will, so the pod's `status.nominatedNodeName` is set to the node first (as
    kube-scheduler does, for components such as the cluster autoscaler to see where the pod is
    going while PreBind runs). Skip: it will not, and its PreBind is not called. Error fails
    the attempt; any other code is an Error too. A PreBind plugin without this method is taken
    to work on every pod, so implementing it saves a status write per pod it has nothing to do
    for.
    """

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status: ...


@runtime_checkable
class BindPlugin(Plugin, Protocol):
    """Bind the pod to the node; the first plugin that does not return Skip decides.

    Success means bound; Skip passes to the next Bind plugin (DefaultBinder last); a
    rejection or Error unreserves the pod and retries it after backoff.
    """

    async def bind(self, state: CycleState, pod: Pod, node_name: str) -> Status: ...


@runtime_checkable
class PostBindPlugin(Plugin, Protocol):
    """Informational, after a successful bind (clean up, notify). Nothing it does, raising
    included, changes the pod's fate: failures are logged only."""

    async def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None: ...


@runtime_checkable
class EnqueueExtensions(Plugin, Protocol):
    """The cluster events that may make a pod this plugin rejected schedulable again.

    Without it, any event retries such pods. Each registration may carry a QueueingHint
    (`QueueingHintFn`) that looks at the changed object and answers QUEUE or QUEUE_SKIP.
    """

    def events_to_register(self) -> list[ClusterEventWithHint]: ...


SignFragments = Mapping[str, object]
"""Named parts of a pod, each a value that compares by value (`==`): numbers, strings, tuples,
mappings, frozen dataclasses. Several plugins may give a part of the same name (the pod's
volumes, say); they give it the same value."""


@runtime_checkable
class SignPlugin(Plugin, Protocol):
    """Optional: what of a pod this plugin's PreFilter, Filter, PreScore and Score read, so
    that the scheduler can tell pods that are alike (opportunistic batching).

    Two pods whose fragments are equal must get the same answers from the plugin on the same
    node in the same cluster state. Return None when this pod cannot be compared with others,
    for instance because the plugin's answer for a node depends on where other pods went. A
    profile batches only when every one of its PreFilter, Filter, PreScore and Score plugins
    signs; a plugin without `sign_pod` turns batching off for the profile.
    """

    def sign_pod(self, pod: Pod) -> SignFragments | None: ...


PodSignature = Mapping[str, object]
"""A pod's signature in a profile: its schedulerName and every signing plugin's fragments,
merged. Pods with equal signatures are alike to that profile."""


MetricSamples = Mapping[str, Iterable[tuple[Sequence[str], float]]]
"""Samples by metric family name: (label values in the family's order, value) pairs."""


@runtime_checkable
class MetricsReporter(Plugin, Protocol):
    """Optional: values a plugin reports when /metrics is scraped, for the plugin families the
    scheduler's metric catalog declares. Called on the event loop; it must only read."""

    def metric_samples(self) -> MetricSamples: ...


# The method that marks a class as implementing each extension point.
EXTENSION_POINT_METHODS: dict[str, str] = {
    "PreEnqueue": "pre_enqueue",
    "QueueSort": "less",
    "PreFilter": "pre_filter",
    "Filter": "filter",
    "PostFilter": "post_filter",
    "PreScore": "pre_score",
    "Score": "score",
    "Reserve": "reserve",
    "Permit": "permit",
    "PreBind": "pre_bind",
    "Bind": "bind",
    "PostBind": "post_bind",
}


def implemented_extension_points(plugin_class: type) -> list[str]:
    """Extension points a plugin class implements, in upstream's order."""
    return [
        point
        for point, method in EXTENSION_POINT_METHODS.items()
        if callable(getattr(plugin_class, method, None))
    ]
