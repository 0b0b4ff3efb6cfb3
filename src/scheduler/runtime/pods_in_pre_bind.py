"""Pods whose binding cycle is at PreBind, so that preemption can stop one there.

A pod at PreBind (waiting, say, for its volumes or devices to be bound) holds its node only in
the scheduler's memory until Bind. A higher-priority pod preempting it has no need to delete
it: cancelling its PreBind fails the binding cycle, which gives the node back and returns the
pod to the queue, as kube-scheduler does. Once PreBind is over the pod is about to be bound and
can no longer be stopped so; the preemptor must then delete it.
"""

from __future__ import annotations

import asyncio

from scheduler.framework.status import Status


class PodInPreBind:
    """One pod's PreBind, run as `task`; satisfies scheduler.framework.handle.PodInPreBind."""

    def __init__(self, task: asyncio.Future[Status]) -> None:
        self._task = task
        self._finished = False
        self.cancel_message: str | None = None

    def cancel(self, message: str) -> bool:
        """Stop the PreBind, failing the binding cycle with the Error `message`; False if
        PreBind is over and the pod is on its way to Bind."""
        if self._finished:
            return False
        if self.cancel_message is None:
            self.cancel_message = message
            self._task.cancel()
        return True

    def mark_pre_bound(self) -> bool:
        """PreBind is over: from now on the pod cannot be cancelled here. False if it was
        cancelled first (a PreBind that ignored the cancellation and succeeded anyway)."""
        if self.cancel_message is not None:
            return False
        self._finished = True
        return True


class PodsInPreBind:
    """Every pod at PreBind, by UID; one for the whole scheduler, as pods of all profiles may
    preempt each other."""

    def __init__(self) -> None:
        self._pods: dict[str, PodInPreBind] = {}

    def add(self, uid: str, task: asyncio.Future[Status]) -> PodInPreBind:
        entry = PodInPreBind(task)
        self._pods[uid] = entry
        return entry

    def remove(self, uid: str, entry: PodInPreBind) -> None:
        if self._pods.get(uid) is entry:
            del self._pods[uid]

    def get(self, uid: str) -> PodInPreBind | None:
        return self._pods.get(uid)

    def __len__(self) -> int:
        return len(self._pods)
