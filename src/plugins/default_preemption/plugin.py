"""DefaultPreemption: when no node fits, make room on one by preempting lower-priority pods."""

from __future__ import annotations

from plugins.default_preemption.args import DefaultPreemptionArgs
from plugins.default_preemption.args import num_candidates
from plugins.default_preemption.hints import preemption_events
from plugins.helpers.preemption import WAITING_FOR_PREEMPTION
from plugins.helpers.preemption import Evaluator
from plugins.helpers.preemption import PreemptingPostFilter
from plugins.helpers.preemption import Preemptor
from plugins.helpers.preemption import ineligibility
from plugins.helpers.preemption import select_victims
from scheduler.framework import SUCCESS
from scheduler.framework import ClusterEventWithHint
from scheduler.framework import Handle
from scheduler.framework import Pod
from scheduler.framework import Status


class DefaultPreemption(PreemptingPostFilter):
    """PostFilter (preemption) and PreEnqueue (holding a preemptor back while its victims go).

    Preemption is asynchronous, as upstream's default since v1.33: the cycle picks the node and
    the victims, nominates the preemptor, and leaves the API calls to a background task.
    """

    name = "DefaultPreemption"

    def __init__(self, args: DefaultPreemptionArgs | None, handle: Handle) -> None:
        self.args = args or DefaultPreemptionArgs()
        self.handle = handle
        preemptor = Preemptor(
            ineligibility=lambda state, pod, statuses: ineligibility(handle, pod, statuses),
            candidate_window=self._candidate_window,
            select_victims=select_victims,
        )
        self.evaluator = Evaluator(handle, self.name, preemptor)

    def _candidate_window(self, potential: int) -> tuple[int, int]:
        # A random start, so that repeated preemptions do not always pick the same nodes.
        offset = self.handle.rng.randrange(potential)
        return offset, num_candidates(self.args, potential)

    def pre_enqueue(self, pod: Pod) -> Status:
        if self.evaluator.executor.holds(pod.uid):
            return Status.unresolvable(WAITING_FOR_PREEMPTION)
        return SUCCESS

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return preemption_events()
