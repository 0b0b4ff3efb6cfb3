"""Coscheduling: a PodGroup's members are placed together, at least minMember of them, or not
at all. Semantics and texts follow scheduler-plugins' plugin (see this package's README)."""

from __future__ import annotations

from plugins.coscheduling.args import CoschedulingArgs
from plugins.coscheduling.cluster_room import Holdings
from plugins.coscheduling.cluster_room import gap_text
from plugins.coscheduling.cluster_room import unmet_resources
from plugins.coscheduling.dialects import GroupRef
from plugins.coscheduling.dialects import group_of_raw
from plugins.coscheduling.directory import GroupDirectory
from plugins.coscheduling.go_quantity import new_quantity
from plugins.coscheduling.hints import coscheduling_events
from plugins.coscheduling.members import PODS_RESOURCE
from plugins.coscheduling.members import Members
from plugins.coscheduling.members import members_of
from plugins.coscheduling.pod_group import PodGroup
from plugins.coscheduling.status import run_status_loop
from plugins.coscheduling.tracker import GroupTracker
from plugins.helpers import deleted_pod
from scheduler.framework import SUCCESS
from scheduler.framework import ClusterEventWithHint
from scheduler.framework import CycleState
from scheduler.framework import Handle
from scheduler.framework import MetricSamples
from scheduler.framework import NodeStatusReader
from scheduler.framework import NodeTable
from scheduler.framework import Pod
from scheduler.framework import PostFilterResult
from scheduler.framework import PreFilterExtensions
from scheduler.framework import PreFilterResult
from scheduler.framework import QueuedPodInfo
from scheduler.framework import QueueingHint
from scheduler.framework import Status
from scheduler.objects.resources import PODS

# Upstream's texts for a group it cannot find, as PostFilter and Permit word them.
GROUP_NOT_FOUND_IN_POST_FILTER = "can not find pod group"
GROUP_NOT_FOUND_IN_PERMIT = "PodGroup not found"
# Why waiting siblings are turned away, as upstream words it.
REJECTED_IN_POST_FILTER = "optimistic rejection in PostFilter"
REJECTED_IN_UNRESERVE = "rejection in Unreserve"
# Results of a gang's attempt, as kube-scheduler's own (alpha) pod-group family names them.
SCHEDULED = "scheduled"
UNSCHEDULABLE = "unschedulable"


class Coscheduling:
    name = "Coscheduling"

    def __init__(self, args: CoschedulingArgs | None, handle: Handle) -> None:
        self.args = args or CoschedulingArgs()
        self.handle = handle
        self.groups = GroupDirectory(handle)
        self.tracker = GroupTracker()
        # Only the replica that schedules writes PodGroup status, with or without pods pending.
        handle.start_when_leading("podgroup-status", lambda: run_status_loop(handle))
        # creationTimestamp is wall time; queue times are the scheduler clock's. The offset is
        # taken once: recomputed per comparison it would jitter, and the queue's heap order
        # with it.
        clock = handle.clock
        self._wall_to_clock = clock.now() - clock.wall().timestamp()
        # Groups with members waiting at Permit, and how their attempts ended.
        self._attempting: set[GroupRef] = set()
        self._attempts = {SCHEDULED: 0, UNSCHEDULABLE: 0}

    # ---- lookups ---------------------------------------------------------------------------

    def _gang(self, pod: Pod) -> tuple[GroupRef | None, PodGroup | str | None]:
        """The pod's group reference and its group (None: no such object; str: unreadable).
        A pod with no group, or with a native group of the basic policy, gets (None, None)."""
        ref = group_of_raw(pod.raw)
        if ref is None:
            return None, None
        group = self.groups.lookup(ref)
        if isinstance(group, PodGroup) and not group.gang:
            return None, None
        return ref, group

    def _members(self, ref: GroupRef) -> Members:
        return members_of(self.handle.lister(PODS_RESOURCE), ref)

    def _placed(self, ref: GroupRef, members: Members) -> set[str]:
        """Members bound, or assumed and past Permit (waiting or allowed)."""
        return set(self.tracker.assigned(ref, members.keys)) | set(members.bound)

    def _timeout(self, group: PodGroup) -> float:
        if group.schedule_timeout_seconds is not None:
            return group.schedule_timeout_seconds
        return self.args.default_wait_seconds

    # ---- QueueSort -------------------------------------------------------------------------

    def less(self, a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        """Higher priority first; then the earlier group time (a group's creation, or its last
        failure), so one group's members are tried back to back; then the name."""
        if a.pod.priority != b.pod.priority:
            return a.pod.priority > b.pod.priority
        time_a, time_b = self._sort_time(a), self._sort_time(b)
        if time_a != time_b:
            return time_a < time_b
        return a.key < b.key

    def _sort_time(self, info: QueuedPodInfo) -> float:
        ref, group = self._gang(info.pod)
        if ref is None or not isinstance(group, PodGroup):
            first = info.initial_attempt_timestamp
            return first if first is not None else info.timestamp
        created = group.created + self._wall_to_clock
        failed = self.tracker.failed_at(ref)
        return max(created, failed) if failed is not None else created

    # ---- PreFilter -------------------------------------------------------------------------

    def pre_filter(
        self, state: CycleState, pod: Pod, table: NodeTable
    ) -> tuple[PreFilterResult | None, Status]:
        # UnschedulableAndUnresolvable, as upstream has it, so no preemption is tried; PostFilter
        # still runs and turns the group away as for any other unfit member.
        ref, group = self._gang(pod)
        if ref is None:
            return None, SUCCESS
        if group is None:
            # Ours: upstream lets the pod through to Permit, which turns it away.
            return None, Status.unresolvable(
                f'PodGroup "{ref}" does not exist; waiting for it to be created'
            )
        if isinstance(group, str):
            return None, Status.unresolvable(group)
        return None, self._check_group(pod, ref, group, table)

    def _check_group(self, pod: Pod, ref: GroupRef, group: PodGroup, table: NodeTable) -> Status:
        if self.tracker.in_backoff(ref, self.handle.clock.now()):
            return Status.unresolvable(f"podGroup {ref} failed recently")
        members = self._members(ref)
        if members.total < group.min_member:
            return Status.unresolvable(
                f"pre-filter pod {pod.name} cannot find enough sibling pods, current pods "
                f"number: {members.total}, minMember of group: {group.min_member}"
            )
        if members.total - members.gated < group.min_member:
            # Upstream has this check too; its exact words may differ. Worded as the one
            # above, counting only the members no scheduling gate holds back.
            return Status.unresolvable(
                f"pre-filter pod {pod.name} cannot find enough ungated sibling pods, current "
                f"ungated pods number: {members.total - members.gated}, minMember of group: "
                f"{group.min_member}"
            )
        if group.min_resources is None:
            return SUCCESS
        return self._check_room(ref, group, members, table)

    def _check_room(
        self, ref: GroupRef, group: PodGroup, members: Members, table: NodeTable
    ) -> Status:
        """minResources, with one pod slot per required member, against the whole cluster's
        free room; a pass is kept for permitWaitingTimeSeconds."""
        now = self.handle.clock.now()
        if self.tracker.resources_permitted(ref, now):
            return SUCCESS
        need = {**(group.min_resources or {}), PODS: group.min_member}
        unmet = unmet_resources(table, need, self._group_holdings(ref, members, table))
        if unmet:
            wanted = {**group.min_resource_quantities, PODS: new_quantity(group.min_member)}
            return Status.unresolvable(gap_text(unmet, wanted))
        self.tracker.permit_resources(ref, now + self.args.permitted_for_seconds)
        return SUCCESS

    def _group_holdings(self, ref: GroupRef, members: Members, table: NodeTable) -> Holdings:
        """What the group's members (bound, or assumed and past Permit) hold on each node, so
        the room check does not count the group against itself."""
        nodes = dict(members.bound)
        for key, assignment in self.tracker.assigned(ref, members.keys).items():
            nodes.setdefault(key, assignment.node_name)
        held: dict[int, dict[str, int]] = {}
        for key, node_name in nodes.items():
            row = table.row_of(node_name)
            pod = table.node_infos[row].pods.get(key) if row is not None else None
            if row is None or pod is None:
                continue
            on_node = held.setdefault(row, {})
            for name, amount in pod.requests.items():
                on_node[name] = on_node.get(name, 0) + amount
            on_node[PODS] = on_node.get(PODS, 0) + 1
        return held

    def pre_filter_extensions(self) -> PreFilterExtensions | None:
        return None

    # ---- PostFilter ------------------------------------------------------------------------

    def post_filter(
        self, state: CycleState, pod: Pod, statuses: NodeStatusReader
    ) -> tuple[PostFilterResult | None, Status]:
        """A member fits nowhere (Filter, or our own PreFilter, turned it away): unless the
        group is at or close to its quorum, its waiting members give their places back."""
        ref, group = self._gang(pod)
        if ref is None:
            # Ours: upstream adds "can not find pod group" to every ordinary pod's message.
            return None, Status.unschedulable()
        if not isinstance(group, PodGroup):
            return PostFilterResult(), Status.unschedulable(GROUP_NOT_FOUND_IN_POST_FILTER)
        members = self._members(ref)
        placed = len(self._placed(ref, members))
        if placed >= group.min_member:
            # The quorum is met already; this pod is one of the extras.
            return None, Status.unschedulable()
        missing = group.min_member - placed
        if missing * 100 <= self.args.pod_group_reject_percentage * group.min_member:
            # Close enough to the quorum: keep the waiting members, let this one try again.
            return None, Status.unschedulable()
        self._reject_group(ref, REJECTED_IN_POST_FILTER)
        self.tracker.forget_resources_check(ref)
        self.tracker.hold_back(ref, pod.key)
        self._count_failure(ref, group, members)
        return PostFilterResult(), Status.unschedulable(
            f"PodGroup {ref} gets rejected due to Pod {pod.name} is unschedulable even after "
            "PostFilter"
        )

    def _count_failure(self, ref: GroupRef, group: PodGroup, members: Members) -> None:
        """Start the optional backoff and record the failure time, for a group whose members
        all exist: as upstream backs off only such a group, one still waiting for members (or,
        ours, for its scheduling gates to go) has not failed, and must neither sit out a
        backoff nor lose its siblings' activation once it is complete. A rejection that only
        echoes a running backoff is no new failure either (upstream does not extend it)."""
        now = self.handle.clock.now()
        if members.total - members.gated < group.min_member or self.tracker.in_backoff(ref, now):
            return
        backoff = self.args.pod_group_backoff_seconds
        if backoff > 0:
            self.tracker.back_off(ref, now, backoff)
        self.tracker.record_failure(ref, now)

    def _end_attempt(self, ref: GroupRef, result: str) -> None:
        if ref in self._attempting:
            self._attempting.discard(ref)
            self._attempts[result] += 1

    def _reject_group(self, ref: GroupRef, message: str) -> None:
        """Reject every member waiting at Permit, freeing the places they hold."""
        self._end_attempt(ref, UNSCHEDULABLE)
        for assignment in self.tracker.assigned(ref).values():
            waiting = self.handle.get_waiting_pod(assignment.uid)
            if waiting is not None:
                waiting.reject(self.name, message)

    # ---- Reserve / Unreserve ---------------------------------------------------------------

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return SUCCESS

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        """One member gave its place back (timeout, rejection, failed bind): so does the group."""
        ref = group_of_raw(pod.raw)
        if ref is None:
            return
        group = self.groups.lookup(ref)
        if not isinstance(group, PodGroup) or not group.gang:
            self._let_go(ref, pod.key)
            return
        self.tracker.unassign(ref, pod.key)
        self._reject_group(ref, REJECTED_IN_UNRESERVE)
        self.tracker.forget_resources_check(ref)
        self.tracker.record_failure(ref, self.handle.clock.now())

    def _let_go(self, ref: GroupRef, pod_key: str) -> None:
        """A member of a group that is gone (or no gang any more) gave its place back. As
        upstream, its waiting siblings are left to their own timeouts; only the attempt is
        ended once the last of them has gone, so the groups-waiting gauge does not stay up."""
        self.tracker.unassign(ref, pod_key)
        if not self.tracker.assigned(ref):
            self._end_attempt(ref, UNSCHEDULABLE)

    # ---- Permit ----------------------------------------------------------------------------

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, float]:
        ref, group = self._gang(pod)
        if ref is None:
            return SUCCESS, 0.0
        if not isinstance(group, PodGroup):
            return Status.unschedulable(GROUP_NOT_FOUND_IN_PERMIT), 0.0
        members = self._members(ref)
        waiting_before = self.tracker.assigned(ref, members.keys)
        self.tracker.assign(ref, pod.key, pod.uid, node_name)
        self.tracker.release_hold(ref, pod.key)
        placed = self._placed(ref, members) | {pod.key}
        if len(placed) >= group.min_member:
            for assignment in waiting_before.values():
                waiting = self.handle.get_waiting_pod(assignment.uid)
                if waiting is not None:
                    waiting.allow(self.name)
            self.tracker.clear_failure(ref)
            self._end_attempt(ref, SCHEDULED)
            return SUCCESS, 0.0
        self._attempting.add(ref)
        if not waiting_before and self._may_hurry(ref, group):
            # The first member to wait brings its siblings forward, so the quorum is reached
            # within one Permit window instead of whenever they come up in the queue.
            for raw in members.unbound:
                sibling = Pod.from_dict(raw)
                if sibling.key != pod.key and not sibling.scheduling_gates:
                    state.pods_to_activate[sibling.key] = sibling
        # Shown by `explain` only: the scheduler reports a wait by its end, not its reason.
        missing = group.min_member - len(placed)
        return Status.wait(
            f"waiting for {missing} more member(s) of PodGroup {ref}: {len(placed)} of "
            f"minMember {group.min_member} placed"
        ), self._timeout(group)

    def _may_hurry(self, ref: GroupRef, group: PodGroup) -> bool:
        """Siblings are pulled out of their backoff only if the group has not failed within
        its schedule timeout: a group that keeps failing must not spin the scheduler."""
        failed = self.tracker.failed_at(ref)
        return failed is None or self.handle.clock.now() - failed >= self._timeout(group)

    def metric_samples(self) -> MetricSamples:
        profile = self.handle.profile_name
        return {
            "scheduler_podgroups_waiting_at_permit": [((profile,), float(len(self._attempting)))],
            "scheduler_podgroup_schedule_attempts_total": [
                ((profile, result), float(count)) for result, count in self._attempts.items()
            ],
        }

    def events_to_register(self) -> list[ClusterEventWithHint]:
        return coscheduling_events(self._after_assigned_pod_gone)

    def _after_assigned_pod_gone(self, pod: Pod, old: object, new: object) -> QueueingHint:
        """Room freed elsewhere may complete the group. A sibling's place is no news while
        the member that fit nowhere (and turned the group away) has not got through Filter
        again: waiting at Permit without it only holds places until the timeout, whose
        rejections would bring the siblings round again, and again."""
        ref = group_of_raw(pod.raw)
        gone = deleted_pod(old, new)
        if ref is None or group_of_raw(gone.raw) != ref:
            return QueueingHint.QUEUE
        held_by = self.tracker.held_back_by(ref)
        if held_by is None:
            return QueueingHint.QUEUE
        if held_by not in self._members(ref).keys:
            # The member that held the group back is gone; a sibling's place may help again.
            self.tracker.release_hold(ref, held_by)
            return QueueingHint.QUEUE
        return QueueingHint.QUEUE_SKIP
