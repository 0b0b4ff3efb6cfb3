"""Coscheduling without a cluster: its args, PodGroup parsing of every dialect, its hints, and
its extension points driven one call at a time on a fake clock."""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Any

import pytest
from pydantic import ValidationError

from plugins.coscheduling import Coscheduling
from plugins.coscheduling import CoschedulingArgs
from plugins.coscheduling.dialects import NATIVE_RESOURCE
from plugins.coscheduling.dialects import SIGS_RESOURCE
from plugins.coscheduling.dialects import X_K8S_RESOURCE
from plugins.coscheduling.dialects import GroupRef
from plugins.coscheduling.dialects import group_of_raw
from plugins.coscheduling.go_quantity import minus_each
from plugins.coscheduling.go_quantity import new_quantity
from plugins.coscheduling.go_quantity import node_room_form
from plugins.coscheduling.go_quantity import parse_go_quantity
from plugins.coscheduling.go_quantity import resource_list_text
from plugins.coscheduling.hints import after_group_changed
from plugins.coscheduling.hints import after_member_changed
from plugins.coscheduling.members import Members
from plugins.coscheduling.pod_group import parse_pod_group
from plugins.coscheduling.status import desired_status
from scheduler.framework import CycleState
from scheduler.framework import Pod
from scheduler.framework import QueueingHint
from scheduler.framework import Status
from scheduler.framework import WaitingPod
from scheduler.objects.errors import InvalidObjectError
from scheduler.objects.node import Node
from scheduler.testing import FakeClock
from scheduler.testing import FakeHandle
from scheduler.testing import build_table
from scheduler.testing import make_node
from scheduler.testing import make_pod

GROUP_LABEL = "scheduling.x-k8s.io/pod-group"
REF = GroupRef(X_K8S_RESOURCE, "default", "g")


def test_args_defaults_are_upstreams() -> None:
    args = CoschedulingArgs()
    assert (
        args.permit_waiting_time_seconds,
        args.pod_group_backoff_seconds,
        args.pod_group_reject_percentage,
    ) == (60, 0, 10)


@pytest.mark.parametrize(
    ("raw", "field", "message"),
    [
        (
            {"permitWaitingTimeSeconds": -1},
            "permitWaitingTimeSeconds",
            "Invalid value: -1: must be greater than 0",
        ),
        (
            {"podGroupBackoffSeconds": -1},
            "podGroupBackoffSeconds",
            "Invalid value: -1: must be greater than 0",
        ),
        (
            {"podGroupRejectPercentage": 101},
            "podGroupRejectPercentage",
            "Invalid value: 101: must be between 0 and 100",
        ),
    ],
)
def test_args_errors_are_upstreams(raw: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(ValidationError) as caught:
        CoschedulingArgs.model_validate(raw)
    [error] = caught.value.errors()
    assert error["loc"] == (field,)
    assert error["msg"] == message


def test_every_dialect_names_its_group() -> None:
    x_k8s = make_pod("a").label("scheduling.x-k8s.io/pod-group", "g").dict()
    sigs = make_pod("b").label("pod-group.scheduling.sigs.k8s.io", "g").dict()
    native = make_pod("c").spec(schedulingGroup={"podGroupName": "g"}).dict()
    assert group_of_raw(x_k8s) == GroupRef(X_K8S_RESOURCE, "default", "g")
    assert group_of_raw(sigs) == GroupRef(SIGS_RESOURCE, "default", "g")
    assert group_of_raw(native) == GroupRef(NATIVE_RESOURCE, "default", "g")
    assert group_of_raw(make_pod("d").dict()) is None


def test_pod_group_fields_and_errors() -> None:
    ref = GroupRef(X_K8S_RESOURCE, "ns", "g")
    raw = {
        "metadata": {"name": "g", "namespace": "ns", "creationTimestamp": "2026-01-01T00:00:00Z"},
        "spec": {"minMember": 3, "minResources": {"cpu": "2"}, "scheduleTimeoutSeconds": 5},
    }
    group = parse_pod_group(ref, raw)
    assert (group.min_member, group.min_resources, group.schedule_timeout_seconds) == (
        3,
        {"cpu": 2000},
        5.0,
    )
    with pytest.raises(InvalidObjectError, match=r"PodGroup ns/g: spec.minMember: must be"):
        parse_pod_group(ref, {"spec": {"minMember": 0}})
    # A timeout of 0 leaves the wait to the plugin's argument, as scheduler-plugins reads it.
    unset = parse_pod_group(ref, {"spec": {"minMember": 2, "scheduleTimeoutSeconds": 0}})
    assert unset.schedule_timeout_seconds is None
    native = GroupRef(NATIVE_RESOURCE, "ns", "g")
    assert not parse_pod_group(native, {"spec": {"schedulingPolicy": {"basic": {}}}}).gang
    assert (
        parse_pod_group(
            native, {"spec": {"schedulingPolicy": {"gang": {"minCount": 4}}}}
        ).min_member
        == 4
    )


def test_hints_are_about_the_pods_own_group() -> None:
    pod = make_pod("a").label("scheduling.x-k8s.io/pod-group", "g").obj()
    sibling = make_pod("b").label("scheduling.x-k8s.io/pod-group", "g").obj()
    stranger = make_pod("c").label("scheduling.x-k8s.io/pod-group", "h").obj()
    assert after_member_changed(pod, None, sibling) is QueueingHint.QUEUE
    assert after_member_changed(pod, None, stranger) is QueueingHint.QUEUE_SKIP
    group = {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "metadata": {"name": "g", "namespace": "default"},
        "spec": {"minMember": 2},
    }
    assert after_group_changed(pod, None, group) is QueueingHint.QUEUE
    # A status write is no news to the members.
    with_status = {**group, "status": {"phase": "Pending"}}
    assert after_group_changed(pod, group, with_status) is QueueingHint.QUEUE_SKIP
    other = {**group, "metadata": {"name": "h", "namespace": "default"}}
    assert after_group_changed(pod, None, other) is QueueingHint.QUEUE_SKIP


def test_args_accept_a_zero_wait_and_then_wait_upstreams_default() -> None:
    args = CoschedulingArgs.model_validate({"permitWaitingTimeSeconds": 0})
    gang = _Gang([_member("g-0"), _member("g-1")], _pod_group(2), args=args)
    status, wait = gang.permit("g-0")
    assert status.is_wait and wait == 60.0


# ---- the extension points, one call at a time -----------------------------------------------


@dataclass
class _Waiting:
    """A member held at Permit, recording how it was let go."""

    pod: Pod
    node_name: str
    rejected: list[str] = field(default_factory=list)

    def pending_plugins(self) -> list[str]:
        return [] if self.rejected else ["Coscheduling"]

    def allow(self, plugin: str) -> None:
        pass

    def reject(self, plugin: str, message: str) -> bool:
        self.rejected.append(message)
        return True

    def preempt(self, plugin: str, message: str) -> bool:
        return False


class _WaitingHandle(FakeHandle):
    """A FakeHandle whose waiting pods are the members a test put at Permit."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.waiting: dict[str, _Waiting] = {}

    def get_waiting_pod(self, uid: str) -> WaitingPod | None:
        return self.waiting.get(uid)


class _NoStatuses:
    def status_of(self, node_name: str) -> Status:
        return Status()

    def nodes_with_code(self, code: int) -> list[str]:
        return []


def _pod_group(min_member: int, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.x-k8s.io/v1alpha1",
        "kind": "PodGroup",
        "metadata": {"name": "g", "namespace": "default", "resourceVersion": "1"},
        "spec": {"minMember": min_member, **spec},
    }


def _member(name: str, *, gated: bool = False, node: str = "") -> dict[str, Any]:
    builder = make_pod(name).label(GROUP_LABEL, "g").req(cpu="1")
    if gated:
        builder = builder.scheduling_gate("example.com/wait")
    if node:
        builder = builder.node(node)
    return builder.dict()


class _Gang:
    """One PodGroup "g" in namespace default, its members, and nodes of 2 CPUs unless given."""

    def __init__(
        self,
        members: Sequence[dict[str, Any]],
        group: dict[str, Any],
        *,
        args: CoschedulingArgs | None = None,
        nodes: Sequence[dict[str, Any]] = (),
        others: Sequence[dict[str, Any]] = (),
    ) -> None:
        self.clock = FakeClock()
        node_objects = nodes or [make_node("n0").capacity(cpu="2", pods="110").dict()]
        self.table = _table(node_objects, [*members, *others])
        self.handle = _WaitingHandle(
            self.table, clock=self.clock, listers={"podgroups": [group], "pods": members}
        )
        self.plugin = Coscheduling(args, self.handle)

    def pod(self, name: str) -> Pod:
        raw = self.handle.lister("pods").get("default", name)
        assert raw is not None
        return Pod.from_dict(raw)

    def put(self, member: dict[str, Any]) -> None:
        """Create or replace a member in the pod informer."""
        pods = self.handle.lister("pods")
        assert hasattr(pods, "add")
        pods.add(member)

    def pre_filter(self, name: str) -> Status:
        return self.plugin.pre_filter(CycleState(), self.pod(name), self.table)[1]

    def post_filter(self, name: str) -> Status:
        return self.plugin.post_filter(CycleState(), self.pod(name), _NoStatuses())[1]

    def attempt(self, name: str) -> tuple[Status, Status | None]:
        """PreFilter and, if it turns the pod away, PostFilter, as a scheduling cycle runs them."""
        pre = self.pre_filter(name)
        return pre, (self.post_filter(name) if pre.is_rejected else None)

    def permit(self, name: str, state: CycleState | None = None) -> tuple[Status, float]:
        """Permit on n0; a member told to wait is held, so PostFilter and Unreserve see it."""
        pod = self.pod(name)
        status, wait = self.plugin.permit(state or CycleState(), pod, "n0")
        if status.is_wait:
            self.handle.waiting[pod.uid] = _Waiting(pod, "n0")
        return status, wait

    def rejections(self, name: str) -> list[str]:
        return self.handle.waiting[self.pod(name).uid].rejected


def _table(nodes: Sequence[dict[str, Any]], pods: Sequence[dict[str, Any]]) -> Any:
    return build_table(
        [Node.from_dict(n) for n in nodes],
        [Pod.from_dict(p) for p in pods if p["spec"].get("nodeName")],
    )


def _rejected_in_post_filter(pod: str) -> str:
    return (
        f"PodGroup default/g gets rejected due to Pod {pod} is unschedulable even after PostFilter"
    )


def test_min_resources_rejection_goes_through_post_filter_and_backs_the_group_off() -> None:
    """PostFilter after our own PreFilter turns the group away as after any unfit member:
    backoff, failure time; a rejection during the backoff does not extend it."""
    args = CoschedulingArgs.model_validate({"podGroupBackoffSeconds": 10})
    gang = _Gang(
        [_member("g-0"), _member("g-1")], _pod_group(2, minResources={"cpu": "100"}), args=args
    )
    pre, post = gang.attempt("g-0")
    assert pre == Status.unresolvable("resource gap: map[cpu:{{98000 -3} {<nil>}  DecimalSI}]")
    assert post == Status.unschedulable(_rejected_in_post_filter("g-0"))
    failed = gang.plugin.tracker.failed_at(REF)
    assert failed == gang.clock.now()
    gang.clock.advance(5)
    pre, post = gang.attempt("g-1")
    assert pre == Status.unresolvable("podGroup default/g failed recently")
    assert post == Status.unschedulable(_rejected_in_post_filter("g-1"))
    # Only echoing the backoff: no new failure, and the backoff ends when it was set to.
    assert gang.plugin.tracker.failed_at(REF) == failed
    gang.clock.advance(6)
    assert gang.pre_filter("g-1").reasons[0].startswith("resource gap: ")


def test_group_waiting_for_members_is_turned_away_but_has_not_failed() -> None:
    """Rejected for want of members, a group neither backs off nor records a failure, so once
    complete its first member to wait still brings its siblings forward."""
    args = CoschedulingArgs.model_validate({"podGroupBackoffSeconds": 10})
    gang = _Gang([_member("g-0"), _member("g-1")], _pod_group(3), args=args)
    pre, post = gang.attempt("g-0")
    assert pre == Status.unresolvable(
        "pre-filter pod g-0 cannot find enough sibling pods, current pods number: 2, "
        "minMember of group: 3"
    )
    assert post == Status.unschedulable(_rejected_in_post_filter("g-0"))
    assert gang.plugin.tracker.failed_at(REF) is None
    gang.put(_member("g-2"))
    assert gang.pre_filter("g-0").is_success
    state = CycleState()
    status, _ = gang.permit("g-0", state)
    assert status.is_wait
    assert sorted(state.pods_to_activate) == ["default/g-1", "default/g-2"]


def test_group_held_by_scheduling_gates_does_not_back_off() -> None:
    args = CoschedulingArgs.model_validate({"podGroupBackoffSeconds": 10})
    gang = _Gang([_member("g-0"), _member("g-1", gated=True)], _pod_group(2), args=args)
    pre, post = gang.attempt("g-0")
    assert pre == Status.unresolvable(
        "pre-filter pod g-0 cannot find enough ungated sibling pods, current ungated pods "
        "number: 1, minMember of group: 2"
    )
    assert post == Status.unschedulable(_rejected_in_post_filter("g-0"))
    gang.put(_member("g-1"))
    assert gang.pre_filter("g-0").is_success


def test_post_filter_and_unreserve_reject_waiting_members_in_upstreams_words() -> None:
    gang = _Gang([_member(f"g-{i}") for i in range(4)], _pod_group(4))
    for placed, name in enumerate(("g-0", "g-1"), start=1):
        # Upstream's Permit gives no reason for the wait; ours says what it waits for, which
        # only `explain` shows.
        assert gang.permit(name) == (
            Status.wait(
                f"waiting for {4 - placed} more member(s) of PodGroup default/g: {placed} of "
                "minMember 4 placed"
            ),
            60.0,
        )
    assert gang.post_filter("g-2") == Status.unschedulable(_rejected_in_post_filter("g-2"))
    assert (
        gang.rejections("g-0") == gang.rejections("g-1") == ["optimistic rejection in PostFilter"]
    )
    gang.permit("g-3")
    gang.plugin.unreserve(CycleState(), gang.pod("g-0"), "n0")
    assert gang.rejections("g-3") == ["rejection in Unreserve"]


def _waiting_groups(gang: _Gang) -> float:
    [(_, value)] = gang.plugin.metric_samples()["scheduler_podgroups_waiting_at_permit"]
    return value


def test_a_group_deleted_while_members_wait_stops_counting_once_they_are_gone() -> None:
    gang = _Gang([_member(f"g-{i}") for i in range(3)], _pod_group(3))
    gang.permit("g-0")
    gang.permit("g-1")
    assert _waiting_groups(gang) == 1.0
    pod_groups = gang.handle.lister("podgroups")
    assert hasattr(pod_groups, "remove")
    pod_groups.remove("default", "g")
    # As upstream, the sibling is left to its own timeout; it still waits.
    gang.plugin.unreserve(CycleState(), gang.pod("g-0"), "n0")
    assert gang.rejections("g-1") == []
    assert _waiting_groups(gang) == 1.0
    gang.plugin.unreserve(CycleState(), gang.pod("g-1"), "n0")
    assert _waiting_groups(gang) == 0.0
    attempts = dict(gang.plugin.metric_samples()["scheduler_podgroup_schedule_attempts_total"])
    assert attempts[("default-scheduler", "unschedulable")] == 1.0


def test_a_group_that_cannot_be_found_in_upstreams_words() -> None:
    gang = _Gang([_member("g-0")], _pod_group(1))
    orphan = make_pod("o-0").label(GROUP_LABEL, "gone").dict()
    gang.put(orphan)
    assert gang.post_filter("o-0") == Status.unschedulable("can not find pod group")
    assert gang.permit("o-0") == (Status.unschedulable("PodGroup not found"), 0.0)
    # A pod of no group: nothing to say (upstream says "can not find pod group" for it too).
    gang.put(make_pod("plain").dict())
    assert gang.post_filter("plain") == Status.unschedulable()


def test_empty_min_resources_still_needs_a_pod_slot_per_member() -> None:
    one_slot = [make_node("n0").capacity(cpu="8", pods="1").dict()]
    gang = _Gang([_member("g-0"), _member("g-1")], _pod_group(2, minResources={}), nodes=one_slot)
    assert gang.pre_filter("g-0") == Status.unresolvable(
        "resource gap: map[pods:{{1 0} {<nil>}  DecimalSI}]"
    )


@pytest.mark.parametrize(
    ("order", "expected"),
    [
        # The overcommitted node first adds its 2 CPUs to the 3 needed; the free 4 leave 1 short.
        (
            ("full", "free"),
            Status.unresolvable("resource gap: map[cpu:{{1000 -3} {<nil>}  DecimalSI}]"),
        ),
        # The free node first meets the 3 CPUs, and a met resource stays met.
        (("free", "full"), Status()),
    ],
)
def test_an_overcommitted_node_counts_against_the_room(
    order: tuple[str, str], expected: Status
) -> None:
    capacities = {"full": "2", "free": "4"}
    nodes = [make_node(n).capacity(cpu=capacities[n], pods="110").dict() for n in order]
    hog = make_pod("hog").req(cpu="4").node("full").dict()
    gang = _Gang(
        [_member("g-0")], _pod_group(1, minResources={"cpu": "3"}), nodes=nodes, others=[hog]
    )
    assert gang.pre_filter("g-0") == expected


def _no_room() -> Any:
    return _table([make_node("n0").capacity(cpu="0", pods="110").dict()], [])


def test_a_passed_resources_check_is_kept_for_permit_waiting_time() -> None:
    """Not for the group's own (shorter) timeout."""
    group = _pod_group(1, minResources={"cpu": "1"}, scheduleTimeoutSeconds=5)
    gang = _Gang([_member("g-0")], group)
    assert gang.pre_filter("g-0").is_success
    gang.clock.advance(30)
    state, pod = CycleState(), gang.pod("g-0")
    assert gang.plugin.pre_filter(state, pod, _no_room())[1].is_success
    gang.clock.advance(31)
    assert gang.plugin.pre_filter(state, pod, _no_room())[1].is_rejected


def test_with_a_zero_wait_a_passed_resources_check_is_kept_three_seconds() -> None:
    """As upstream's cache keeps an entry added for 0 s: its default expiration."""
    args = CoschedulingArgs.model_validate({"permitWaitingTimeSeconds": 0})
    gang = _Gang([_member("g-0")], _pod_group(1, minResources={"cpu": "1"}), args=args)
    assert gang.pre_filter("g-0").is_success
    state, pod = CycleState(), gang.pod("g-0")
    gang.clock.advance(2)
    assert gang.plugin.pre_filter(state, pod, _no_room())[1].is_success
    gang.clock.advance(1)
    assert gang.plugin.pre_filter(state, pod, _no_room())[1].is_rejected


def test_post_filter_after_a_pre_filter_rejection_forgets_the_resources_check() -> None:
    gang = _Gang([_member("g-0"), _member("g-1")], _pod_group(2, minResources={"cpu": "1"}))
    assert gang.pre_filter("g-0").is_success
    pods = gang.handle.lister("pods")
    assert hasattr(pods, "remove")
    pods.remove("default", "g-1")
    assert gang.attempt("g-0")[1] == Status.unschedulable(_rejected_in_post_filter("g-0"))
    gang.put(_member("g-1"))
    assert gang.plugin.pre_filter(CycleState(), gang.pod("g-0"), _no_room())[1].is_rejected


# ---- the minResources gap as Go's %v prints it ------------------------------------------------

# Each case as scheduler-plugins' CheckClusterResource left it, printed by Go (apimachinery
# v0.36): minResources, minMember, each node's free room of every resource.
_GO_GAPS: list[tuple[dict[str, str], int, list[dict[str, int]], str]] = [
    (
        {"cpu": "100"},
        2,
        [{"cpu": 2000, "pods": 110}] * 4,
        "map[cpu:{{92000 -3} {<nil>}  DecimalSI}]",
    ),
    (
        {"cpu": "100", "memory": "1Gi"},
        2,
        [{"cpu": 2000, "memory": 0, "pods": 110}] * 4,
        "map[cpu:{{92000 -3} {<nil>}  DecimalSI} memory:{{1073741824 0} {<nil>}  BinarySI}]",
    ),
    ({}, 500, [{"pods": 110}] * 4, "map[pods:{{60 0} {<nil>}  DecimalSI}]"),
    (
        {"nvidia.com/gpu": "2", "hugepages-2Mi": "4Mi"},
        2,
        [{"pods": 110}] * 2,
        "map[hugepages-2Mi:{{4194304 0} {<nil>}  BinarySI} "
        "nvidia.com/gpu:{{2 0} {<nil>}  DecimalSI}]",
    ),
    (
        {"memory": "3000000000"},
        1,
        [{"memory": 2**30, "pods": 110}],
        "map[memory:{{1926258176 0} {<nil>}  DecimalSI}]",
    ),
    ({"cpu": "0"}, 1, [{"cpu": -1000, "pods": 1}], "map[cpu:{{1000 -3} {<nil>}  DecimalSI}]"),
    ({"cpu": "0.5"}, 1, [{"cpu": 0, "pods": 1}], "map[cpu:{{5 -1} {<nil>}  DecimalSI}]"),
    # No node: what ParseQuantity read, with the text it keeps when that is canonical.
    (
        {"cpu": "100m", "memory": "1Gi"},
        1,
        [],
        "map[cpu:{{100 -3} {<nil>} 100m DecimalSI} memory:{{1073741824 0} {<nil>} 1Gi BinarySI} "
        "pods:{{1 0} {<nil>}  DecimalSI}]",
    ),
    ({"cpu": "1e3"}, 1, [{"pods": 1}], "map[cpu:{{1 3} {<nil>}  DecimalExponent}]"),
    (
        {"memory": "8Gi", "cpu": "1000"},
        1,
        [],
        "map[cpu:{{1000 0} {<nil>}  DecimalSI} memory:{{8589934592 0} {<nil>}  BinarySI} "
        "pods:{{1 0} {<nil>}  DecimalSI}]",
    ),
]


@pytest.mark.parametrize(("wanted", "min_member", "nodes", "expected"), _GO_GAPS)
def test_the_gap_reads_as_go_prints_it(
    wanted: Mapping[str, str], min_member: int, nodes: list[dict[str, int]], expected: str
) -> None:
    quantities = {name: parse_go_quantity(text) for name, text in wanted.items()}
    quantities["pods"] = new_quantity(min_member)
    left = {
        name: minus_each(q, [node.get(name, 0) for node in nodes], node_room_form(name))
        for name, q in quantities.items()
        if not _met(name, q, nodes)
    }
    assert resource_list_text(left) == expected


def _met(name: str, wanted: Any, nodes: list[dict[str, int]]) -> bool:
    """Whether some run of nodes from the first meets `wanted` (for the table above, where
    the met resources are the ones the text leaves out)."""
    left = wanted
    for node in nodes:
        left = minus_each(left, [node.get(name, 0)], node_room_form(name))
        if left.big is None and left.value <= 0:
            return True
    return False


def test_a_big_decimal_prints_its_amount_where_go_prints_an_address() -> None:
    left = minus_each(parse_go_quantity("1.5Gi"), [2**30], node_room_form("memory"))
    assert str(left) == "{{0 0} {536870912}  BinarySI}"


# ---- PodGroup status --------------------------------------------------------------------------


def _members_owned_by(*owners: str) -> Members:
    members = Members()
    for i in range(2):
        raw = make_pod(f"g-{i}").label(GROUP_LABEL, "g").dict()
        raw["metadata"]["ownerReferences"] = [{"kind": "Job", "name": o} for o in owners]
        members.keys.add(f"default/g-{i}")
        members.pods[f"default/g-{i}"] = raw
    return members


def test_leaving_pending_names_the_owners_as_upstreams_controller_does() -> None:
    now = FakeClock().wall()
    members = _members_owned_by("train", "eval")
    status = desired_status({"phase": "Pending"}, 2, members, now)
    assert status["phase"] == "Scheduling"
    assert status["occupiedBy"] == "default/eval,default/train"
    # Written on the way out of Pending only, and not when the member has no owner.
    assert "occupiedBy" not in desired_status({"phase": "Scheduling"}, 2, members, now)
    assert "occupiedBy" not in desired_status({"phase": "Pending"}, 2, _members_owned_by(), now)


def test_phases_only_move_forward_when_members_finish_or_go() -> None:
    now = FakeClock().wall()
    two = _members_owned_by("train")
    started = desired_status({"phase": "Pending"}, 2, two, now)
    assert started["phase"] == "Scheduling"
    # One member finished (the informer no longer holds it): still Scheduling, same start.
    one = Members()
    one.keys.add("default/g-0")
    one.pods["default/g-0"] = two.pods["default/g-0"]
    kept = desired_status(started, 2, one, now)
    assert (kept["phase"], kept["scheduleStartTime"]) == (
        "Scheduling",
        started["scheduleStartTime"],
    )
    # A group that never had enough stays Pending.
    assert desired_status({"phase": "Pending"}, 3, two, now)["phase"] == "Pending"
