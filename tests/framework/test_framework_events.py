"""Cluster events: which registrations cover which events, and how events are named."""

from __future__ import annotations

import pytest

from scheduler.framework.events import ASSIGNED_POD_ADD
from scheduler.framework.events import NODE_ADD
from scheduler.framework.events import UNSCHEDULED_POD_UPDATE
from scheduler.framework.events import WILDCARD_EVENT
from scheduler.framework.events import ActionType
from scheduler.framework.events import ClusterEvent
from scheduler.framework.events import EventResource


def test_update_and_all_are_unions_of_the_single_actions() -> None:
    singles = [a for a in ActionType if a.value & (a.value - 1) == 0]
    assert ActionType.ALL == ActionType.ADD | ActionType.DELETE | ActionType.UPDATE
    assert ActionType.UPDATE & ActionType.UPDATE_NODE_TAINT
    assert not ActionType.UPDATE & (ActionType.ADD | ActionType.DELETE)
    assert len(singles) == 14


def test_a_pod_registration_covers_assigned_and_unscheduled_pods() -> None:
    any_pod = ClusterEvent(EventResource.POD, ActionType.ALL)
    assert any_pod.matches(ASSIGNED_POD_ADD)
    assert any_pod.matches(UNSCHEDULED_POD_UPDATE)
    assert not any_pod.matches(NODE_ADD)


def test_a_registration_covers_only_the_actions_it_names() -> None:
    taints = ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_TAINT)
    assert taints.matches(ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_TAINT))
    assert taints.matches(ClusterEvent(EventResource.NODE, ActionType.UPDATE))
    assert not taints.matches(ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_LABEL))
    assert not taints.matches(NODE_ADD)


def test_an_assigned_pod_registration_does_not_cover_unscheduled_pods() -> None:
    assigned = ClusterEvent(EventResource.ASSIGNED_POD, ActionType.ALL)
    assert assigned.matches(ASSIGNED_POD_ADD)
    assert not assigned.matches(UNSCHEDULED_POD_UPDATE)


@pytest.mark.parametrize("event", [NODE_ADD, ASSIGNED_POD_ADD, UNSCHEDULED_POD_UPDATE])
def test_the_wildcard_covers_every_event(event: ClusterEvent) -> None:
    assert WILDCARD_EVENT.is_wildcard and WILDCARD_EVENT.matches(event)
    assert not event.is_wildcard


def test_events_read_as_upstreams_labels() -> None:
    assert str(NODE_ADD) == "NodeAdd"
    assert str(UNSCHEDULED_POD_UPDATE) == "UnschedulablePodUpdate"
    assert str(ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_LABEL)) == (
        "NodeUPDATE_NODE_LABEL"
    )
    assert str(ClusterEvent(EventResource.POD_GROUP, ActionType.ADD, "PodGroupAdd")) == (
        "PodGroupAdd"
    )
