"""The binding cycle: one asyncio task per pod that passed Reserve and Permit.

In order: PreBindPreFlight (when PreBind has work to do for the pod, or Permit holds it, the
pod is nominated to its node first, so that the cluster autoscaler and the like see where it
is going), wait while Permit plugins hold the pod, PreBind, Bind (by an interested HTTP
extender if there is one, else the Bind plugins), then the pod is bound (the
cache keeps it, the `Scheduled` Event is written, the metrics count it) and PostBind runs. Any
failure goes to the failure handler, which unreserves, forgets, records and requeues. Cancelled
at shutdown, a cycle gives back what it reserved unless the Binding was already made.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterator

from scheduler.cluster.port import ClusterClient
from scheduler.core.failure import FailureHandler
from scheduler.core.outcome import Attempt
from scheduler.core.outcome import Failure
from scheduler.core.services import CyclePart
from scheduler.core.services import CycleServices
from scheduler.framework.errors import APIError
from scheduler.framework.status import Status
from scheduler.framework.status import raised
from scheduler.objects.pod import Pod
from scheduler.observability import V_BIND
from scheduler.observability import V_DEBUG
from scheduler.observability import get_logger
from scheduler.observability import log_v
from scheduler.observability.label_values import SCHEDULED
from scheduler.runtime.pods_in_pre_bind import PodsInPreBind

_log = get_logger("scheduler")

# Binding cycles that may be at their Bind at once. Bindings go out over the client's
# connections (100 by default); more cycles than that only queue for the API, each holding its
# attempt (cycle state, plugin state: about 10 KB), and when the API is what limits the rate a
# drain of 10,000 pods piled up thousands of them. With room for twice the connections the API
# never waits for the scheduling loop, and the loop waits for room instead. Only Bind counts:
# pods waiting at Permit (a gang larger than this must still gather all its members) or in a
# PreBind that waits for volumes, and bound pods writing their Event, take no room.
MAX_BINDING_CYCLES = 200
# The `operation` label of binding cycles in `scheduler_goroutines`.
BINDING_OPERATION = "binding"


class BindingCycles(CyclePart):
    """Starts and keeps the binding cycles in flight."""

    def __init__(
        self,
        services: CycleServices,
        *,
        failures: FailureHandler,
        bind_by_extender: Callable[[Pod, str], Awaitable[Status | None]],
        watch: Callable[[asyncio.Task[None]], None],
        client: ClusterClient,
        pods_in_pre_bind: PodsInPreBind,
        limit: int = MAX_BINDING_CYCLES,
    ) -> None:
        """`watch` owns each task: an exception escaping one is the scheduler's fatal error;
        `bind_by_extender` lets an interested HTTP extender bind instead of the Bind plugins
        (its verdict, or None when none took the pod); `wait_for_room` holds the scheduling
        loop while `limit` cycles are at their Bind; `pods_in_pre_bind` lists the pods at a
        PreBind that has work to do, for preemption to cancel."""
        super().__init__(services)
        self._failures = failures
        self._bind_by_extender = bind_by_extender
        self._watch = watch
        self._client = client
        self._pods_in_pre_bind = pods_in_pre_bind
        self.limit = limit
        self.tasks: set[asyncio.Task[None]] = set()
        self.binding = 0
        self._room = asyncio.Event()

    def start(self, attempt: Attempt, assumed: Pod, node: str) -> None:
        task = asyncio.create_task(self._run(attempt, assumed, node), name=f"bind:{assumed.key}")
        self.tasks.add(task)
        # `scheduler_goroutines{operation="binding"}`: upstream's binding goroutines in flight.
        self._metrics.goroutines(BINDING_OPERATION, 1)
        task.add_done_callback(self._finished)
        self._watch(task)

    def _finished(self, task: asyncio.Task[None]) -> None:
        self.tasks.discard(task)
        self._metrics.goroutines(BINDING_OPERATION, -1)

    async def wait_for_room(self) -> None:
        """Until fewer than `limit` cycles are at their Bind; once held, until a quarter of
        the room is free, so the loop then schedules a run of pods back to back rather than
        one per Binding that ends."""
        if self.binding < self.limit:
            return
        resume = self.limit * 3 // 4
        while self.binding > resume:
            self._room.clear()
            await self._room.wait()

    @contextlib.contextmanager
    def _taking_room(self) -> Iterator[None]:
        self.binding += 1
        try:
            yield
        finally:
            self.binding -= 1
            self._room.set()

    async def _run(self, attempt: Attempt, assumed: Pod, node: str) -> None:
        try:
            await self._bind(attempt, assumed, node)
        except asyncio.CancelledError:
            # Shut down mid-cycle: give back what was reserved unless the Binding was made.
            if not attempt.bound and self._cache.is_assumed(assumed.key):
                self._failures.undo(attempt, assumed, node)
            raise
        except Exception as exc:
            # Plugins' faults arrive as statuses; this is the cycle's own code failing. The pod
            # must not be lost: unless it was bound, it fails with Error and is retried.
            message = f"running the binding cycle: {raised(exc)}"
            _log.error("Error binding pod", pod=assumed.key, node=node, err=message, exc_info=exc)
            if attempt.bound:
                return
            if self._cache.is_assumed(assumed.key):
                self._failures.undo(attempt, assumed, node)
            self._failures.handle(attempt, Failure(Status.from_error(message), message))

    async def _bind(self, attempt: Attempt, assumed: Pod, node: str) -> None:
        framework, state, info = attempt.framework, attempt.state, attempt.info
        await self._failures.settle_writes(assumed)
        pre_flight = framework.run_pre_bind_pre_flights(state, assumed, node)
        if not (pre_flight.is_success or pre_flight.is_skip):
            # Before Permit's wait, as upstream: a pod held at Permit is held no longer.
            framework.waiting_pods.remove(assumed.uid)
            failure = Failure.while_binding(pre_flight)
            if self._failures.after_reserve(attempt, assumed, node, failure):
                self._failures.release_place(assumed, others_only=True)
            return
        if pre_flight.is_success or framework.will_wait_on_permit(assumed):
            await self._nominate(attempt, assumed, node)
        status = await framework.wait_on_permit(assumed)
        if not status.is_success:
            failure = Failure.at_chosen_node(status)
            if self._failures.after_reserve(attempt, assumed, node, failure):
                self._failures.release_place(assumed, others_only=True)
            return
        self._queue.done(info.pod)
        status = await self._pre_bind_and_bind(attempt, assumed, node, pre_flight.is_success)
        if not status.is_success:
            # Released before the pod is requeued, so the move concerns only the other pods
            # (the pod is out of the queue until `handle` puts it back).
            if self._failures.undo(attempt, assumed, node):
                self._failures.release_place(assumed)
            self._failures.handle(attempt, Failure.while_binding(status))
            return
        attempt.bound = True
        if self._failures.result_annotations is not None:
            self._failures.result_annotations.bound(assumed)
        self._failures.errored.discard(assumed.key)
        self._cache.finish_binding(assumed)
        # Timed at the binding, before the wait for room in the Event queue below: upstream's
        # Event never waits, and a burst of Events must not stretch the latencies reported.
        now = time.perf_counter()
        self._metrics.schedule_attempt(SCHEDULED, framework.name, now - attempt.started)
        first = info.initial_attempt_timestamp
        sli = self._clock.now() - first if first is not None else 0.0
        self._metrics.pod_scheduled(info.attempts, sli)
        await self._recorder.pod_event_waiting(
            assumed,
            event_type="Normal",
            reason="Scheduled",
            action="Binding",
            note=f"Successfully assigned {assumed.key} to {node}",
            controller=framework.name,
        )
        log_v(_log, V_BIND, "Successfully bound pod to node", pod=assumed.key, node=node)
        if info.flushed_from_unschedulable:
            log_v(
                _log,
                V_DEBUG,
                "Pod scheduled after flush from unschedulablePods",
                pod=assumed.key,
                unschedulable_plugins=sorted(info.unschedulable_plugins),
                pending_plugins=sorted(info.pending_plugins),
            )
            self._metrics.pod_scheduled_after_flush()
        await framework.run_post_bind(state, assumed, node)
        # Pods a plugin asked to activate during the binding cycle (a gang's waiting members,
        # say) move up once it has succeeded, as upstream does.
        if state.pods_to_activate:
            self._queue.activate(state.pods_to_activate.values())
            state.pods_to_activate.clear()

    async def _nominate(self, attempt: Attempt, assumed: Pod, node: str) -> None:
        """`status.nominatedNodeName` set to the node the pod is about to be bound to. Only
        informative: a failed write is logged and the cycle goes on. Should the cycle then
        fail, the failure handler clears it again."""
        if assumed.nominated_node_name == node:
            return
        try:
            await self._client.patch_pod_status(
                assumed.namespace, assumed.name, {"nominatedNodeName": node}
            )
            attempt.binding_nomination = node
        except APIError as exc:
            _log.error(
                "Failed to update the nominated node name in the binding cycle",
                pod=assumed.key,
                nominatedNodeName=node,
                err=str(exc),
            )

    async def _pre_bind_and_bind(
        self, attempt: Attempt, assumed: Pod, node: str, pre_bind_has_work: bool
    ) -> Status:
        framework, state = attempt.framework, attempt.state
        if pre_bind_has_work:
            status = await self._cancellable_pre_bind(attempt, assumed, node)
        else:
            status = await framework.run_pre_bind(state, assumed, node)
        if not status.is_success:
            return status
        with self._taking_room():
            # An interested binding extender binds instead of the Bind plugins (upstream's
            # order).
            by_extender = await self._bind_by_extender(assumed, node)
            if by_extender is not None:
                status = by_extender
            else:
                status = await framework.run_bind(state, assumed, node)
        if status.is_skip:
            status = Status.from_error(f"no bind plugin bound pod {assumed.key}")
        return status

    async def _cancellable_pre_bind(self, attempt: Attempt, assumed: Pod, node: str) -> Status:
        """PreBind, listed while it runs so that a preemption can cancel it (upstream's pods in
        PreBind). The plugin cancelled fails with `running PreBind plugin "<name>": <the
        preemption's message>`, and one that ran on to success after all with the message
        alone, as upstream's; shutting down still cancels the whole cycle."""
        run = attempt.framework.run_pre_bind(
            attempt.state, assumed, node, lambda: entry.cancel_message
        )
        task: asyncio.Future[Status] = asyncio.ensure_future(run)
        entry = self._pods_in_pre_bind.add(assumed.uid, task)
        try:
            status = await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if entry.cancel_message is None or (current is not None and current.cancelling()):
                raise
            return Status.from_error(entry.cancel_message)
        finally:
            self._pods_in_pre_bind.remove(assumed.uid, entry)
        if status.is_success and not entry.mark_pre_bound():
            assert entry.cancel_message is not None
            return Status.from_error(entry.cancel_message)
        return status
