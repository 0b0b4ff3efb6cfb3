"""Informer callbacks: keep the cache and the queue in step with the cluster."""

from __future__ import annotations

import time
from collections.abc import Callable

from scheduler.backend.cache import SchedulerCache
from scheduler.backend.queue import SchedulingQueue
from scheduler.backend.queue import event_label
from scheduler.backend.queue import labelled
from scheduler.backend.queue import node_update_events
from scheduler.backend.queue import pod_update_events
from scheduler.backend.queue import resource_label
from scheduler.framework.events import ASSIGNED_POD_DELETE
from scheduler.framework.events import NODE_ADD
from scheduler.framework.events import NODE_DELETE
from scheduler.framework.events import UNSCHEDULED_POD_ADD
from scheduler.framework.events import ActionType
from scheduler.framework.events import ClusterEvent
from scheduler.framework.events import EventResource
from scheduler.objects.errors import InvalidObjectError
from scheduler.objects.node import Node
from scheduler.objects.pod import Pod
from scheduler.objects.pod_changes import rebased
from scheduler.objects.raw import DEFAULT_NAMESPACE
from scheduler.objects.raw import RawObject
from scheduler.observability import SchedulerMetrics
from scheduler.observability import get_logger

_log = get_logger(__name__)

# Watched resources (plural API names) and the event resource plugins register for.
_RESOURCE_KINDS = {
    "namespaces": EventResource.NAMESPACE,
    "persistentvolumes": EventResource.PERSISTENT_VOLUME,
    "persistentvolumeclaims": EventResource.PERSISTENT_VOLUME_CLAIM,
    "storageclasses": EventResource.STORAGE_CLASS,
    "csinodes": EventResource.CSI_NODE,
    "csidrivers": EventResource.CSI_DRIVER,
    "csistoragecapacities": EventResource.CSI_STORAGE_CAPACITY,
    "volumeattachments": EventResource.VOLUME_ATTACHMENT,
    "poddisruptionbudgets": EventResource.POD_DISRUPTION_BUDGET,
    "podgroups": EventResource.POD_GROUP,
    "podgroups.scheduling.sigs.k8s.io": EventResource.POD_GROUP,
    "podgroups.scheduling.k8s.io": EventResource.POD_GROUP,
    "elasticquotas": EventResource.ELASTIC_QUOTA,
    "resourceclaims": EventResource.RESOURCE_CLAIM,
    "resourceslices": EventResource.RESOURCE_SLICE,
    "deviceclasses": EventResource.DEVICE_CLASS,
    "ippools": EventResource.IP_POOL,
}
# Custom resources' events are labelled as scheduler-plugins registers them ("<resource>.
# <version>.<group>"), and the built-in PodGroup as kube-scheduler does; every other kind as
# `resource_label` spells it.
_CUSTOM_LABELS = {
    "podgroups": "podgroups.v1alpha1.scheduling.x-k8s.io",
    "podgroups.scheduling.sigs.k8s.io": "podgroups.v1alpha1.scheduling.sigs.k8s.io",
    "podgroups.scheduling.k8s.io": "scheduling.k8s.io/PodGroup",
    "elasticquotas": "elasticquotas.v1alpha1.scheduling.x-k8s.io",
}
# Resources whose changes change the taints of the devices ResourceSlices publish.
_SLICE_TAINTING = frozenset({"devicetaintrules"})
_SLICE_TAINTS_CHANGED = labelled(EventResource.RESOURCE_SLICE, ActionType.UPDATE)


def _parse_pod(raw: RawObject) -> Pod | None:
    """The pod, or None (with a warning) if it cannot be read: one bad object must not stop
    the scheduler."""
    try:
        return Pod.from_dict(raw)
    except InvalidObjectError as exc:
        _log.warning("Ignoring an unreadable pod", err=str(exc))
        return None


def _parse_node(raw: RawObject) -> Node | None:
    try:
        return Node.from_dict(raw)
    except InvalidObjectError as exc:
        _log.warning("Ignoring an unreadable node", err=str(exc))
        return None


def _key(raw: RawObject) -> str:
    meta = raw.get("metadata") or {}
    return f"{meta.get('namespace') or DEFAULT_NAMESPACE}/{meta.get('name')}"


class PodEventHandlers:
    """Translates raw informer events into cache updates and queue moves.

    `is_ours` tells whether one of our profiles schedules a pod; `reject_waiting` rejects the
    pod of that UID held at Permit, if there is one (False otherwise): an assumed pod that is
    deleted must not wait out its timeout."""

    def __init__(
        self,
        cache: SchedulerCache,
        queue: SchedulingQueue,
        metrics: SchedulerMetrics,
        is_ours: Callable[[Pod], bool],
        reject_waiting: Callable[[str], bool],
    ) -> None:
        self._cache = cache
        self._queue = queue
        self._metrics = metrics
        self._is_ours = is_ours
        self._reject_waiting = reject_waiting
        # Parsed views of every pod we know, so updates can compare old and new cheaply.
        self._pods: dict[str, Pod] = {}

    def current_pod(self, key: str) -> Pod | None:
        return self._pods.get(key)

    def _timed(self, label: str, started: float) -> None:
        self._metrics.event_handling_duration(label, time.perf_counter() - started)

    # ---- pods --------------------------------------------------------------------------

    def pod_added(self, raw: RawObject) -> None:
        started = time.perf_counter()
        pod = _parse_pod(raw)
        if pod is None:
            return
        self._pods[pod.key] = pod
        if pod.node_name:
            # A finished pod is one upstream's informer never lists (it leaves out pods that
            # have succeeded or failed): nothing to do, nothing to time.
            if not pod.is_terminal:
                self._cache.add_pod(pod)
                self._queue.assigned_pod_added(pod)
                self._timed("AssignedPodAdd", started)
        elif self._is_ours(pod):
            self._queue.add(pod)
            self._offer_to_others(UNSCHEDULED_POD_ADD, None, pod)
            self._timed("UnschedulablePodAdd", started)

    def pod_updated(self, old_raw: RawObject, new_raw: RawObject) -> None:
        started = time.perf_counter()
        known = self._pods.get(_key(new_raw))
        # A Binding coming back changes nothing else parsed: no need to parse it all again.
        new = rebased(known, new_raw) if known is not None else None
        if new is None:
            new = _parse_pod(new_raw)
        if new is None:
            return
        old = self._pods.get(new.key) or _parse_pod(old_raw)
        if old is not None and old.uid != new.uid:
            self._replaced(old, new_raw, started)
            return
        self._pods[new.key] = new
        if old is None:
            # It was unreadable before: treat the readable version as new.
            self.pod_added(new_raw)
            return
        if new.node_name:
            # Timed under the labels of upstream's handlers: a binding is an assigned pod's
            # arrival and an unscheduled pod's departure; a pod that finishes leaves upstream's
            # informer, a deletion; an update is timed as a whole and for each kind of change.
            if not old.node_name:
                # Bound: by us (confirming an assumed pod) or by someone else.
                if not new.is_terminal:
                    self._cache.add_pod(new)
                    self._queue.assigned_pod_added(new)
                    self._timed("AssignedPodAdd", started)
                if self._is_ours(old):
                    deleting = time.perf_counter()
                    self._queue.delete(old)
                    self._timed("UnschedulablePodDelete", deleting)
            elif new.is_terminal:
                self._cache.remove_pod(old)
                self._queue.assigned_pod_deleted(old)
                self._timed("AssignedPodDelete", started)
            else:
                self._cache.update_pod(old, new)
                updating = time.perf_counter() - started
                for label, moving in self._queue.assigned_pod_updated(old, new):
                    self._metrics.event_handling_duration(label, updating + moving)
                self._timed("AssignedPodUpdate", started)
            return
        if not self._is_ours(new):
            return
        if self._cache.is_assumed(new.key):
            if new.deleting and not old.deleting:
                self._assumed_pod_deleted(new)
            # Upstream times the update before it finds the pod assumed.
            self._timed("UnschedulablePodUpdate", started)
        else:
            self._queue.update(old, new)
            events = pod_update_events(old, new)
            for event in events:
                self._offer_to_others(event, old, new)
            if old.nominated_node_name and old.nominated_node_name != new.nominated_node_name:
                # Lower or equal priority pods counted it on its old node as if it were there.
                self._nomination_gone(old)
            # The whole update, and again under each kind of change it made, as upstream.
            self._timed("UnschedulablePodUpdate", started)
            for event in events:
                label = event_label(event)
                if label != "UnschedulablePodUpdate":
                    self._timed(label, started)

    def _offer_to_others(self, event: ClusterEvent, old: Pod | None, new: Pod) -> None:
        """An unscheduled pod's arrival or change can help other pending pods too (a gang
        waiting for its quorum); the queue offers it to them through their plugins' hints."""
        self._queue.move_all_to_active_or_backoff(
            event, old, new, lambda info: info.pod.uid != new.uid
        )

    def _replaced(self, old: Pod, new_raw: RawObject, started: float) -> None:
        """The pod was deleted and made again under its name while the watch was away, and a
        relist reports the swap as an update: upstream, keyed by UID, sees one pod go and
        another come, and so do we (an assumed old pod is let go, the new one is queued)."""
        self._pods.pop(old.key, None)
        self._gone(old, started)
        self.pod_added(new_raw)

    def pod_deleted(self, raw: RawObject) -> None:
        started = time.perf_counter()
        pod = self._pods.pop(_key(raw), None) or _parse_pod(raw)
        if pod is None:
            return
        self._gone(pod, started)

    def _gone(self, pod: Pod, started: float) -> None:
        if pod.node_name:
            self._cache.remove_pod(pod)
            self._queue.assigned_pod_deleted(pod)
            self._timed("AssignedPodDelete", started)
            return
        if self._is_ours(pod):
            self._queue.delete(pod)
            if self._cache.is_assumed(pod.key):
                self._assumed_pod_deleted(pod)
            elif pod.nominated_node_name:
                self._nomination_gone(pod)
            self._timed("UnschedulablePodDelete", started)

    def _assumed_pod_deleted(self, pod: Pod) -> None:
        """An assumed pod is being deleted: a wait at Permit is rejected (its binding cycle
        then undoes everything), otherwise the place it holds is given back at once, not when
        its PreBind or Bind fails; either way the pods it kept out may now fit."""
        assumed = self._cache.get_pod(pod.key)
        if assumed is None or assumed.uid != pod.uid:
            return
        if not self._reject_waiting(pod.uid):
            self._cache.forget_pod(assumed)
        self._queue.move_all_to_active_or_backoff(ASSIGNED_POD_DELETE, assumed, None)

    def _nomination_gone(self, pod: Pod) -> None:
        priority = pod.priority
        self._queue.move_all_to_active_or_backoff(
            ASSIGNED_POD_DELETE, pod, None, lambda info: info.pod.priority <= priority
        )

    # ---- nodes -------------------------------------------------------------------------

    def node_added(self, raw: RawObject) -> None:
        started = time.perf_counter()
        node = _parse_node(raw)
        if node is None:
            return
        self._cache.add_node(node)
        self._queue.node_event(NODE_ADD, None, node)
        self._timed("NodeAdd", started)

    def node_updated(self, old_raw: RawObject, new_raw: RawObject) -> None:
        started = time.perf_counter()
        old = self._cache.node_info(_name(new_raw))
        old_node = old.node if old is not None else _parse_node(old_raw)
        new = _parse_node(new_raw)
        if new is None:
            return
        self._cache.update_node(old_node, new)
        if old_node is None:
            # Unreadable until now: the node arrives.
            self._queue.node_event(NODE_ADD, None, new)
            self._timed("NodeAdd", started)
            return
        updating = time.perf_counter() - started
        # As upstream: each changed aspect is its own event, timed as the cache update plus
        # its own move; an update that changed nothing relevant is not timed at all.
        for event in node_update_events(old_node, new):
            moving = time.perf_counter()
            self._queue.node_event(event, old_node, new)
            seconds = updating + time.perf_counter() - moving
            self._metrics.event_handling_duration(event_label(event), seconds)

    def node_deleted(self, raw: RawObject) -> None:
        started = time.perf_counter()
        node = _parse_node(raw)
        if node is None:
            return
        self._cache.remove_node(node)
        self._queue.node_event(NODE_DELETE, node, None)
        self._timed("NodeDelete", started)

    # ---- other resources plugins watch -------------------------------------------------

    def _object_event(
        self, resource: str, action: ActionType, old: RawObject | None, new: RawObject | None
    ) -> None:
        if resource in _SLICE_TAINTING:
            # What changed is which devices carry the rule's taint, in the slices it selects:
            # reported as upstream's slice tracker does, as an update of ResourceSlices. No
            # slice object goes with it (a hint reading the rule as a slice would misjudge).
            if self._queue.registered(_SLICE_TAINTS_CHANGED):
                started = time.perf_counter()
                self._queue.move_all_to_active_or_backoff(_SLICE_TAINTS_CHANGED, None, None)
                self._timed(event_label(_SLICE_TAINTS_CHANGED), started)
            return
        kind = _RESOURCE_KINDS.get(resource)
        if kind is None:
            return
        started = time.perf_counter()
        verb = {ActionType.ADD: "Add", ActionType.DELETE: "Delete"}.get(action, "Update")
        label = f"{_CUSTOM_LABELS.get(resource) or resource_label(kind)}{verb}"
        event = ClusterEvent(kind, action, label)
        # kube-scheduler handles (and times, in scheduler_event_handling_duration_seconds) only
        # the actions some plugin registered: a Namespace added or a PDB's status written is
        # no event of the scheduler's when nothing asked for it.
        if not self._queue.registered(event):
            return
        self._queue.move_all_to_active_or_backoff(event, old, new)
        self._timed(label, started)

    def object_added(self, resource: str) -> Callable[[RawObject], None]:
        def handle(raw: RawObject) -> None:
            self._object_event(resource, ActionType.ADD, None, raw)

        return handle

    def object_updated(self, resource: str) -> Callable[[RawObject, RawObject], None]:
        def handle(old: RawObject, new: RawObject) -> None:
            self._object_event(resource, ActionType.UPDATE, old, new)

        return handle

    def object_deleted(self, resource: str) -> Callable[[RawObject], None]:
        def handle(raw: RawObject) -> None:
            self._object_event(resource, ActionType.DELETE, raw, None)

        return handle


def _name(raw: RawObject) -> str:
    return str((raw.get("metadata") or {}).get("name", ""))
