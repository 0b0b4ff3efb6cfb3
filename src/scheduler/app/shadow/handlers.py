"""Informer callbacks of shadow mode: the scheduler's own, plus a look at every binding.

When a pod of one of the candidate's schedulerNames goes from unassigned to bound, the cache
still holds the cluster as it was just before that Binding (the watch delivers changes in
order), so the candidate is asked about the pod against exactly the state the production
scheduler decided on, whatever the timing between the two schedulers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from scheduler.core.pod_events import PodEventHandlers
from scheduler.objects.pod import Pod
from scheduler.objects.raw import DEFAULT_NAMESPACE
from scheduler.objects.raw import RawObject

if TYPE_CHECKING:
    from scheduler.core.scheduler import Scheduler

BindingSeen = Callable[[Pod, str], None]


def _node_name(raw: RawObject) -> str:
    return str((raw.get("spec") or {}).get("nodeName") or "")


def _key(raw: RawObject) -> str:
    meta = raw.get("metadata") or {}
    return f"{meta.get('namespace') or DEFAULT_NAMESPACE}/{meta.get('name')}"


class ShadowPodEventHandlers(PodEventHandlers):
    def __init__(self, scheduler: Scheduler, on_binding: BindingSeen) -> None:
        super().__init__(
            scheduler.cache,
            scheduler.queue,
            scheduler.metrics,
            scheduler.responsible_for,
            scheduler.handle_reject_waiting,
        )
        self._scheduler = scheduler
        self._on_binding = on_binding

    def pod_updated(self, old_raw: RawObject, new_raw: RawObject) -> None:
        node = _node_name(new_raw)
        before = self.current_pod(_key(new_raw))
        if (
            node
            and before is not None
            and not before.node_name
            and self._scheduler.responsible_for(before)
        ):
            # Before the cache learns of the Binding.
            self._on_binding(before, node)
        super().pod_updated(old_raw, new_raw)
