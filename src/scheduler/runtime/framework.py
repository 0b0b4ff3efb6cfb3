"""The one face of a profile that the scheduling and binding cycles call, as kube-scheduler's
`framework.Framework`: one `run_*` method per extension point, in the order a pod meets them.

`Framework` is a `Profile` (the profile's plugins grouped by extension point) that also runs
them: each method hands the profile to the module that owns that extension point's rules
(`prefilter`, `filtering`, `postfilter`, `scoring`, `reservation`, `binding`), so those modules
never import this one and the cycles in `scheduler.core` import nothing else from the runtime
to run plugins.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from collections.abc import Sequence

from scheduler.config import EffectiveProfile
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.diagnosis import Diagnosis
from scheduler.framework.handle import Handle
from scheduler.framework.node_info import NodeInfo
from scheduler.framework.node_table import NodeTable
from scheduler.framework.plugins import NodeStatusReader
from scheduler.framework.plugins import PostFilterResult
from scheduler.framework.plugins import Rows
from scheduler.framework.plugins import Scores
from scheduler.framework.spec import PluginSpec
from scheduler.framework.status import SUCCESS
from scheduler.framework.status import Code
from scheduler.framework.status import Status
from scheduler.objects.pod import Pod
from scheduler.runtime import binding
from scheduler.runtime import postfilter
from scheduler.runtime import prefilter
from scheduler.runtime import reservation
from scheduler.runtime import scoring
from scheduler.runtime.batching import OpportunisticBatch
from scheduler.runtime.batching import Signer
from scheduler.runtime.filtering import FilterRun
from scheduler.runtime.invoke import PluginError
from scheduler.runtime.invoke import PluginFault
from scheduler.runtime.metrics_port import RuntimeMetrics
from scheduler.runtime.prefilter import PreFilterOutcome
from scheduler.runtime.profile import Profile
from scheduler.runtime.waiting_pods import WaitingPods


class Framework(Profile):
    """A profile's plugins, and the calls that run them."""

    def __init__(
        self,
        effective: EffectiveProfile,
        registry: Mapping[str, PluginSpec],
        handle: Handle,
        waiting_pods: WaitingPods,
        metrics: RuntimeMetrics | None = None,
        *,
        vectorize: bool = True,
        filter_run: FilterRun | None = None,
        batching: bool = True,
        extenders: bool = False,
        extenders_choose: bool = False,
    ) -> None:
        """`filter_run` keeps the rotating start of the node search; the profiles of one
        scheduler share it, as kube-scheduler's profiles share `nextStartNodeIndex`.
        `batching` is the OpportunisticBatching feature gate; `extenders` says whether the
        scheduler consults HTTP extenders, whose answers no signature covers, and
        `extenders_choose` whether one of them filters or prioritizes: the search then finds as
        many feasible nodes as for scoring, even in a profile without Score plugins."""
        super().__init__(effective, registry, handle, waiting_pods, metrics, vectorize=vectorize)
        self._filter_run = filter_run if filter_run is not None else FilterRun()
        self._extenders_choose = extenders_choose
        signer = Signer(
            self.name,
            [
                *self.pre_filter,
                *(entry.plugin for entry in self.filter),
                *self.pre_score,
                *(entry.plugin for entry in self.score),
            ],
            self.metrics,
            extenders=extenders,
        )
        self.batch = OpportunisticBatch(
            self.name, self.chain, signer, handle, self.metrics, enabled=batching
        )
        """Opportunistic batching: signatures, the kept ranking, node hints."""

    # ---- scheduling cycle (synchronous, but for the awaiting PostFilter) -------------------

    def run_pre_filter(self, state: CycleState, pod: Pod, table: NodeTable) -> PreFilterOutcome:
        return prefilter.run_pre_filter(self, state, pod, table)

    def run_filter_with_nominated(
        self, state: CycleState, pod: Pod, info: NodeInfo, nominated: Sequence[Pod]
    ) -> Status:
        """Every Filter plugin on one node, counting the pods nominated to it: a Filter pass of
        its own (a nominated node or a batch's hint tried first), timed as one, as upstream
        times each search for feasible nodes."""
        if not self.filter:
            return SUCCESS
        started = time.perf_counter()
        status = self.chain.run_with_nominated(state, pod, info, nominated)
        self.observe("Filter", SUCCESS if status.code is not Code.ERROR else status, started)
        return status

    def find_feasible(
        self,
        state: CycleState,
        pod: Pod,
        table: NodeTable,
        allowed: Rows | None,
        diagnosis: Diagnosis,
        nominated_by_row: dict[int, Sequence[Pod]],
    ) -> Rows | Status:
        """The rows every Filter plugin accepts (as many as the profile wants to score), or
        the Error status of a plugin that failed on some node (upstream fails the attempt)."""
        try:
            return self._filter_run.find_feasible(
                self,
                state,
                pod,
                table,
                allowed,
                diagnosis,
                nominated_by_row,
                extenders_choose=self._extenders_choose,
            )
        except PluginError as error:
            return error.status

    def run_post_filter(
        self, state: CycleState, pod: Pod, statuses: NodeStatusReader
    ) -> tuple[PostFilterResult | None, Status]:
        return postfilter.run_post_filter(self, state, pod, statuses)

    async def run_post_filter_awaiting(
        self, state: CycleState, pod: Pod, statuses: NodeStatusReader
    ) -> tuple[PostFilterResult | None, Status]:
        """PostFilter in an attempt that awaits HTTP extenders: a plugin that can await them
        (preemption asks those with a preempt verb) is awaited."""
        return await postfilter.run_post_filter_awaiting(self, state, pod, statuses)

    @staticmethod
    def is_plugin_fault(status: Status) -> bool:
        """Whether `status` is a plugin breaking its contract (it raised, returned the wrong
        type), as opposed to an Error the plugin returned itself."""
        return isinstance(status, PluginFault)

    def run_pre_score(self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows) -> Status:
        return scoring.run_pre_score(self, state, pod, table, rows)

    def run_score(
        self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows
    ) -> Scores | Status:
        """Weighted, normalized totals per feasible row, or the Error status of a plugin that
        failed."""
        try:
            return scoring.run_score(self, state, pod, table, rows)
        except PluginError as error:
            return error.status

    def select_host(self, rows: Rows, totals: Scores) -> int:
        """The best-scoring row, ties broken at random by the profile's generator."""
        return scoring.select_host(rows, totals, self.handle.rng)

    def run_reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return reservation.run_reserve(self, state, pod, node_name)

    def run_unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        reservation.run_unreserve(self, state, pod, node_name)

    def run_permit(
        self,
        state: CycleState,
        pod: Pod,
        node_name: str,
        answers: list[reservation.PermitAnswer] | None = None,
    ) -> Status:
        return reservation.run_permit(self, state, pod, node_name, answers)

    # ---- binding cycle (one task per pod) -------------------------------------------------

    def run_pre_bind_pre_flights(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return binding.run_pre_bind_pre_flights(self, state, pod, node_name)

    def will_wait_on_permit(self, pod: Pod) -> bool:
        return self.waiting_pods.get(pod.uid) is not None

    async def wait_on_permit(self, pod: Pod) -> Status:
        return await reservation.wait_on_permit(self, pod)

    async def run_pre_bind(
        self,
        state: CycleState,
        pod: Pod,
        node_name: str,
        cancel_cause: binding.CancelCause | None = None,
    ) -> Status:
        return await binding.run_pre_bind(self, state, pod, node_name, cancel_cause)

    async def run_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return await binding.run_bind(self, state, pod, node_name)

    async def run_post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        await binding.run_post_bind(self, state, pod, node_name)
