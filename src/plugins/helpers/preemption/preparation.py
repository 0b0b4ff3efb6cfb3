"""Carrying out a chosen preemption: the API calls, made off the scheduling cycle.

The cycle only decides; a background task then preempts victims held at Permit, marks the others
with a DisruptionTarget condition and deletes them, records a Preempted event on each, and
clears the nomination of lower-priority pods nominated to the same node. Meanwhile the
preemptor is kept out of the queue (PreEnqueue asks `holds`) so that it does not preempt
again before the first preemption has taken effect.

If a call fails, no victim's deletion may ever come to requeue the preemptor, so it is
activated at once, as upstream does. It is activated too when the work ends after PreEnqueue
held it back: the event that tried to move it then (a victim gone) would otherwise be lost, and
the later ones may concern only what its rejecting plugins skip (a victim with no ports for a
pod that NodePorts turned away). Deletions that land at once, as in `simulate`, hit that.

The victims of each chosen candidate and how each task ended are kube-scheduler's preemption
metrics.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from plugins.helpers.preemption.candidates import Candidate
from plugins.helpers.preemption.eligibility import DISRUPTION_TARGET
from plugins.helpers.preemption.eligibility import PREEMPTION_BY_SCHEDULER
from scheduler.framework import Handle
from scheduler.framework import Pod
from scheduler.framework import get_logger
from scheduler.framework.concurrently import run_concurrently
from scheduler.framework.errors import APIError
from scheduler.framework.errors import ConflictError
from scheduler.framework.errors import NotFoundError

logger = get_logger(__name__)

PREEMPTED_REASON = "Preempted"
PREEMPTING_ACTION = "Preempting"
# What a victim waiting at Permit is told; its binding cycle fails with it.
WAITING_POD_PREEMPTION = "preempted"
# The `result` label of the preemption goroutine metrics.
SUCCEEDED = "success"
FAILED = "error"


@dataclass(slots=True)
class _Preemption:
    node_name: str
    # Set just before the last victim's API calls (see `PreemptionExecutor.is_running`).
    last_victim: Pod | None = None
    # PreEnqueue turned the preemptor away while this ran (see `PreemptionExecutor.holds`).
    held_back: bool = False


class PreemptionExecutor:
    """Runs preemptions in the background and knows which preemptors are still waiting."""

    def __init__(self, handle: Handle, plugin_name: str) -> None:
        self._handle = handle
        self._plugin_name = plugin_name
        self._running: dict[str, _Preemption] = {}

    def is_running(self, preemptor_uid: str) -> bool:
        """Whether the preemptor's victims are still being preempted.

        Once the last victim's calls have started, the victim leaving the node (or starting to
        terminate) already counts as done: its deletion event may reach the queue before the
        API call returns here, and the preemptor must not miss that event.
        """
        preemption = self._running.get(preemptor_uid)
        if preemption is None:
            return False
        last = preemption.last_victim
        if last is None:
            return True
        node_info = self._handle.node_info(preemption.node_name)
        current = node_info.pods.get(last.key) if node_info is not None else None
        return current is not None and current.uid == last.uid and not current.deleting

    def holds(self, preemptor_uid: str) -> bool:
        """PreEnqueue's question: `is_running`, remembering a yes so that the preemptor is
        activated once the preemption ends."""
        if not self.is_running(preemptor_uid):
            return False
        self._running[preemptor_uid].held_back = True
        return True

    def start(self, preemptor: Pod, candidate: Candidate) -> None:
        """Preempt the candidate's victims in a background task.

        Victims already terminating need no call; if all are, nothing is started.
        """
        handle = self._handle
        victims = [v for v in candidate.victims.pods if not v.deleting]
        if not victims:
            return
        # Counted only for a preemption that makes calls, but with every victim it chose.
        handle.plugin_metrics.preemption_victims(len(candidate.victims.pods))
        preemption = _Preemption(candidate.node_name)
        self._running[preemptor.uid] = preemption

        async def work() -> None:
            started = handle.clock.now()
            try:
                succeeded = await self._run(preemptor, preemption, victims)
            finally:
                if self._running.get(preemptor.uid) is preemption:
                    del self._running[preemptor.uid]
            result = SUCCEEDED if succeeded else FAILED
            handle.plugin_metrics.preemption_goroutine(result, handle.clock.now() - started)
            if not succeeded or preemption.held_back:
                handle.activate([preemptor])

        handle.start_background(f"preemption:{preemptor.key}", work, one_off=True)

    async def _run(self, preemptor: Pod, preemption: _Preemption, victims: Sequence[Pod]) -> bool:
        """Whether every call went through."""
        node = preemption.node_name
        cleared = True
        # Lower-priority pods nominated here may no longer fit; freeing their nomination lets
        # them look elsewhere without waiting for this preemption to finish. A pod nominated
        # only in memory has nothing in the API to clear.
        for nominated in self._handle.nominated_pods_for_node(node):
            if nominated.priority < preemptor.priority and nominated.nominated_node_name:
                cleared = await self._clear_nomination(nominated) and cleared
        try:
            # All but the last at once (as many at a time as the scheduler's parallelism);
            # the last alone, so PreEnqueue can tell its deletion under way from one done.
            await self._preempt_all(preemptor, node, victims[:-1])
            preemption.last_victim = victims[-1]
            await self._preempt(preemptor, node, victims[-1])
        except APIError as error:
            # The remaining victims are left alone so the preemptor can retry sooner.
            logger.error("Preemption failed", pod=preemptor.key, node=node, err=str(error))
            return False
        return cleared

    async def _preempt_all(self, preemptor: Pod, node: str, victims: Sequence[Pod]) -> None:
        """Preempt `victims` concurrently; the first API failure cancels the calls not yet
        made and is raised."""
        await run_concurrently(
            (partial(self._preempt, preemptor, node, victim) for victim in victims),
            self._handle.parallelism,
        )

    async def _clear_nomination(self, pod: Pod) -> bool:
        try:
            await self._handle.api.patch_pod_status(
                pod.namespace, pod.name, {"nominatedNodeName": None}
            )
        except APIError as error:
            logger.error("Cannot clear the nominated node", pod=pod.key, err=str(error))
            return False
        return True

    async def _preempt(self, preemptor: Pod, node: str, victim: Pod) -> None:
        """Preempt a victim waiting at Permit or at PreBind, or mark and delete it; then
        record the event.

        A victim that is already gone needs nothing more (and gets no event).
        """
        note = f"Preempted by pod {preemptor.uid} on node {node}"
        if self._preempt_waiting(victim) or self._preempt_in_pre_bind(victim):
            # Upstream's words for a victim that only the scheduler's memory held.
            note += " (in kube-scheduler memory)."
        elif not await self._mark_and_delete(victim):
            logger.info("Victim is already gone", victim=victim.key, pod=preemptor.key)
            return
        self._handle.record_event(
            victim,
            event_type="Normal",
            reason=PREEMPTED_REASON,
            action=PREEMPTING_ACTION,
            note=note,
            related=preemptor,
        )

    async def _mark_and_delete(self, victim: Pod) -> bool:
        """Mark the victim with its DisruptionTarget condition, then delete it; False when it
        is already gone. Any other failure (a conflict on the mark that the retries did not
        clear included) fails the preemption, as upstream's, so the preemptor is tried again."""
        api = self._handle.api
        condition = self._disruption_condition(victim)
        try:
            if condition is not None:
                await api.patch_pod_status(
                    victim.namespace, victim.name, {"conditions": [condition]}
                )
        except NotFoundError:
            return False
        try:
            # The UID precondition keeps a newer pod of the same name safe; its 409 says the
            # victim is gone, as a 404 does.
            await api.delete_pod(victim.namespace, victim.name, victim.uid)
        except (NotFoundError, ConflictError):
            return False
        return True

    def _preempt_waiting(self, victim: Pod) -> bool:
        """Whether the victim was held at Permit and is now preempted there, which needs no
        API call: its binding cycle fails and it goes back to the queue. A wait that has just
        ended (the victim may be binding) does not count: the victim must be deleted."""
        waiting = self._handle.get_waiting_pod(victim.uid)
        return waiting is not None and waiting.preempt(self._plugin_name, WAITING_POD_PREEMPTION)

    def _preempt_in_pre_bind(self, victim: Pod) -> bool:
        """Whether the victim's binding cycle was at PreBind and is now cancelled there, which
        needs no API call either: the cycle fails and the pod goes back to the queue. A PreBind
        already over does not count (the pod is about to be bound)."""
        at_pre_bind = self._handle.get_pod_in_pre_bind(victim.uid)
        return at_pre_bind is not None and at_pre_bind.cancel(f"preempted by {self._plugin_name}")

    def _disruption_condition(self, victim: Pod) -> dict[str, Any] | None:
        """The DisruptionTarget condition to write, or None if the victim already has it."""
        condition: dict[str, Any] = {
            "type": DISRUPTION_TARGET,
            "status": "True",
            "reason": PREEMPTION_BY_SCHEDULER,
            "message": (
                f"{self._handle.profile_name}: preempting to accommodate a higher priority pod"
            ),
        }
        if victim.generation:
            condition["observedGeneration"] = victim.generation
        existing = _condition(victim, DISRUPTION_TARGET)
        if existing is not None and existing.get("status") == "True":
            # Compared as upstream's UpdatePodCondition does: status, reason, message and probe
            # time (ours has none), but not the observed generation.
            same = all(existing.get(k) == condition[k] for k in ("status", "reason", "message"))
            if same and not existing.get("lastProbeTime"):
                return None
            # An unchanged status keeps its transition time.
            condition["lastTransitionTime"] = existing.get("lastTransitionTime")
        else:
            condition["lastTransitionTime"] = self._now()
        return condition

    def _now(self) -> str:
        return self._handle.clock.wall().strftime("%Y-%m-%dT%H:%M:%SZ")


def _condition(pod: Pod, kind: str) -> Mapping[str, Any] | None:
    for condition in (pod.raw.get("status") or {}).get("conditions") or ():
        if condition.get("type") == kind:
            return condition  # type: ignore[no-any-return]
    return None
