"""Handle: everything a plugin may see of the scheduler and the cluster."""

from __future__ import annotations

import random
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from typing import Protocol
from typing import TypedDict
from typing import Unpack

from scheduler.framework.clock import Clock
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.extenders import Extenders
from scheduler.framework.node_info import NodeInfo
from scheduler.framework.node_table import NodeTable
from scheduler.framework.status import Status
from scheduler.objects.pod import Pod


@dataclass(frozen=True, slots=True)
class ObjectReference:
    """The object an Event is about, when it is not a pod (a PodGroup, say)."""

    api_version: str
    kind: str
    namespace: str
    name: str
    uid: str
    # The version the Event is about: client-go counts Events about two versions of an object
    # as two series.
    resource_version: str = ""


class ClusterAPI(Protocol):
    """The writes plugins may make, and a direct read for a retry after a conflict. Failures
    raise `scheduler.framework.errors.APIError`."""

    async def get(self, resource: str, namespace: str, name: str) -> dict[str, Any]:
        """The object as the API server has it now, or NotFoundError."""
        ...

    async def bind(self, pod: Pod, node_name: str) -> None:
        """Create the pod's Binding; ConflictError if already bound, NotFoundError if gone."""
        ...

    async def delete_pod(self, namespace: str, name: str, uid: str = "") -> None: ...

    async def patch_pod_status(
        self, namespace: str, name: str, patch: Mapping[str, Any]
    ) -> None: ...

    async def patch_object(
        self,
        resource: str,
        namespace: str,
        name: str,
        patch: Mapping[str, Any],
        subresource: str = "",
    ) -> None:
        """Merge-patch any object the scheduler is allowed to write (e.g. a PVC annotation), or
        one of its subresources (e.g. "status" of a custom resource)."""
        ...

    async def create(self, resource: str, obj: Mapping[str, Any]) -> dict[str, Any]:
        """Create an object (named, or by `metadata.generateName`); the server's copy."""
        ...

    async def delete(self, resource: str, namespace: str, name: str) -> None:
        """Delete an object; NotFoundError if it is gone already."""
        ...


class EventDetails(TypedDict):
    """What a plugin says in an Event it records, every field required: the type ("Normal" or
    "Warning"), the reason and the action (upstream's CamelCase words), and the note."""

    event_type: str
    reason: str
    action: str
    note: str


IndexFunc = Callable[[Mapping[str, Any]], str | None]
"""The index value of an object, or None to leave it out of the index."""


class Lister(Protocol):
    """A read-only view of an informer's store of raw API objects."""

    def get(self, namespace: str, name: str) -> Mapping[str, Any] | None: ...

    def list(self, namespace: str | None = None) -> Sequence[Mapping[str, Any]]: ...

    def add_index(self, name: str, index: IndexFunc) -> None:
        """Keep objects findable by `index` from now on (as client-go's indexers); adding an
        index under a name already used keeps the first one."""
        ...

    def by_index(self, name: str, value: str) -> Sequence[Mapping[str, Any]]:
        """The objects whose index `name` is `value` (the index must have been added)."""
        ...

    @property
    def revision(self) -> int:
        """Grows with every change to the objects: what a reader derived from them at one
        revision still holds while the revision is the same."""
        ...

    def changed_since(self, revision: int) -> Sequence[tuple[str, str]] | None:
        """(namespace, name) of the objects added, updated or deleted after `revision`, or
        None when that is no longer known (the reader then reads everything again)."""
        ...


class WaitingPod(Protocol):
    """A pod held at Permit; plugins allow or reject it on their own behalf."""

    @property
    def pod(self) -> Pod: ...

    @property
    def node_name(self) -> str: ...

    def pending_plugins(self) -> list[str]: ...

    def allow(self, plugin: str) -> None: ...

    def reject(self, plugin: str, message: str) -> bool:
        """End the wait because `plugin` rejects the pod (Unschedulable, with `message`).
        False if the wait had already ended."""
        ...

    def preempt(self, plugin: str, message: str) -> bool:
        """End the wait because `plugin` preempts the pod: its binding cycle fails with the
        Error `waiting on permit for pod: <message>`, so the pod is retried after error backoff
        instead of waiting, as a rejected pod does, for a cluster event. False if the wait had
        already ended (the pod may be binding): the caller must then delete the pod instead."""
        ...


class PodInPreBind(Protocol):
    """A pod whose binding cycle is at PreBind."""

    def cancel(self, message: str) -> bool:
        """Stop its PreBind: the binding cycle fails with the Error `message`, the node is
        given back and the pod is retried after backoff, with no API call. False if PreBind is
        already over (the pod is about to be bound): the caller must then delete the pod."""
        ...


class PluginMetrics(Protocol):
    """kube-scheduler's metric families that belong to what its plugins do (preemption,
    volume binding): a plugin doing the same records them here."""

    def preemption_attempt(self) -> None:
        """`scheduler_preemption_attempts_total`: PostFilter tried to preempt for a pod."""
        ...

    def preemption_victims(self, victims: int) -> None:
        """`scheduler_preemption_victims`: the victims of the candidate chosen."""
        ...

    def preemption_goroutine(self, result: str, seconds: float) -> None:
        """`scheduler_preemption_goroutines_execution_total` and `..._duration_seconds`: the
        background part of a preemption ended as `result` ("success" or "error")."""
        ...

    def volume_scheduling_stage_error(self, operation: str) -> None:
        """`scheduler_volume_scheduling_stage_error_total`: volume binding failed with an error
        at `operation` ("predicate", "assume" or "bind")."""
        ...

    def dra_binding_conditions_wait(
        self, profile: str, driver: str, status: str, seconds: float
    ) -> None:
        """`scheduler_dra_bindingconditions_wait_duration_seconds`: PreBind waited `seconds`
        for binding conditions, ending as `status`; once per allocated device."""
        ...

    def dra_binding_conditions_allocation(self, profile: str, driver: str, status: str) -> None:
        """`scheduler_dra_bindingconditions_allocations_total`: one allocated device with
        binding conditions, its wait ending as `status`."""
        ...

    def resource_claim_create(self, status: str) -> None:
        """`scheduler_resourceclaim_creates_total`: PreBind asked the server to create the
        claim for a pod's extended resources, with `status` "success" or "failure"."""
        ...


class Handle(Protocol):
    """Given to every plugin at construction."""

    @property
    def profile_name(self) -> str: ...

    @property
    def clock(self) -> Clock: ...

    @property
    def rng(self) -> random.Random: ...

    @property
    def parallelism(self) -> int: ...

    def feature_enabled(self, gate: str) -> bool:
        """Whether kube-scheduler feature gate `gate` is on in this scheduler: v1.36's default
        unless `--feature-gates` says otherwise (upstream hands plugins the same answers)."""
        ...

    @property
    def node_table(self) -> NodeTable:
        """The live node table; valid for the current cycle only."""
        ...

    def node_info(self, name: str) -> NodeInfo | None: ...

    @property
    def api(self) -> ClusterAPI: ...

    def lister(self, resource: str) -> Lister:
        """Objects of a watched resource, by its plural name (e.g. "namespaces")."""
        ...

    def nominated_pods_for_node(self, node_name: str) -> Sequence[Pod]: ...

    def get_waiting_pod(self, uid: str) -> WaitingPod | None: ...

    def iterate_over_waiting_pods(self) -> Iterator[WaitingPod]: ...

    def reject_waiting_pod(self, uid: str) -> bool: ...

    def get_pod_in_pre_bind(self, uid: str) -> PodInPreBind | None:
        """The pod of this UID if its binding cycle is at PreBind with some PreBind plugin at
        work for it (PreBindPreFlight said so), else None."""
        ...

    def start_background(
        self, name: str, work: Callable[[], Awaitable[None]], *, one_off: bool = False
    ) -> None:
        """Run `work` as a named task owned by the scheduler: a loop that refreshes remote
        data, or with `one_off=True` one piece of work that ends by itself (the API calls
        that carry out a decision). The scheduler is not idle while one-off work runs, so
        `simulate` reports only once its effect has reached the cluster."""
        ...

    def start_when_leading(self, name: str, work: Callable[[], Awaitable[None]]) -> None:
        """Run `work` as a named task owned by the scheduler once this replica schedules with
        synced informers (at once if it already does), until it stops scheduling: for what
        only the leader may do whether or not any pod is pending, such as keeping a custom
        resource's status. Plugins call it from their constructor."""
        ...

    def activate(self, pods: Iterable[Pod]) -> None:
        """Move these pending pods to the active queue now, out of backoff or the unschedulable
        pool (upstream's Handle.Activate): for background work whose failure no cluster event
        will report, such as a preemption whose API calls failed."""
        ...

    @property
    def plugin_metrics(self) -> PluginMetrics: ...

    @property
    def extenders(self) -> Extenders:
        """The HTTP extenders the scheduler is configured with (none in the test kit)."""
        ...

    def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: Pod, node_info: NodeInfo
    ) -> Status:
        """This profile's Filter plugins on one (possibly hypothetical) node, counting the pods
        nominated to it; preemption's dry run uses it on a cloned NodeInfo and CycleState."""
        ...

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: Pod, pod_to_add: Pod, node_info: NodeInfo
    ) -> Status:
        """Every PreFilter extension's AddPod, for a pod hypothetically added to the node."""
        ...

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: Pod, pod_to_remove: Pod, node_info: NodeInfo
    ) -> Status:
        """Every PreFilter extension's RemovePod, for a pod hypothetically removed."""
        ...

    def record_event(
        self, regarding: Pod, *, related: Pod | None = None, **details: Unpack[EventDetails]
    ) -> None:
        """Write an events.k8s.io/v1 Event reported by this profile (asynchronously)."""
        ...

    def record_object_event(
        self, regarding: ObjectReference, **details: Unpack[EventDetails]
    ) -> None:
        """Write an Event about an object other than a pod, reported by this profile."""
        ...
