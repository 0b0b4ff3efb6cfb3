"""The registrations a profile hands the queue besides the plugins' own: the HTTP extenders'
rejector, and the taint-update registration kube-scheduler adds for plugins that watch node
additions only."""

from __future__ import annotations

from scheduler.framework.events import EXTENDER_REJECTOR
from scheduler.framework.events import ActionType
from scheduler.framework.events import ClusterEvent
from scheduler.framework.events import ClusterEventWithHint
from scheduler.framework.events import EventResource
from scheduler.runtime.framework import Framework
from tests.integration.harness import Harness

TAINT_UPDATE = ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_TAINT)


def _default_profile() -> Framework:
    """The default profile, as the scheduler builds it (the scheduler is never started)."""
    return Harness().scheduler.profiles["default-scheduler"]


def _registered_by(
    registrations: list[tuple[str, ClusterEventWithHint]], plugin: str
) -> list[ClusterEventWithHint]:
    return [registration for name, registration in registrations if name == plugin]


def test_the_extender_rejector_is_spelled_as_upstream() -> None:
    # Pods' rejector sets carry it, and scheduler_unschedulable_pods labels them with it.
    assert EXTENDER_REJECTOR == "Extender"


def test_without_extenders_nothing_is_registered_for_them() -> None:
    assert _registered_by(_default_profile().queueing_hints(), EXTENDER_REJECTOR) == []


def test_extenders_are_retried_on_every_change_to_each_resource_watched_by_default() -> None:
    hints = _default_profile().queueing_hints(extenders=True)
    registrations = _registered_by(hints, EXTENDER_REJECTOR)
    assert all(r.hint is None and r.event.action == ActionType.ALL for r in registrations)
    assert {r.event.resource for r in registrations} == {
        EventResource.POD,
        EventResource.NODE,
        EventResource.PERSISTENT_VOLUME,
        EventResource.PERSISTENT_VOLUME_CLAIM,
        EventResource.CSI_NODE,
        EventResource.CSI_DRIVER,
        EventResource.CSI_STORAGE_CAPACITY,
        EventResource.STORAGE_CLASS,
        EventResource.RESOURCE_CLAIM,
        EventResource.DEVICE_CLASS,
    }


def test_a_plugin_watching_node_adds_but_not_taints_is_also_registered_for_taints() -> None:
    # NodeAffinity registers Node Add|UpdateNodeLabel only.
    registrations = _registered_by(_default_profile().queueing_hints(), "NodeAffinity")
    [added] = [r for r in registrations if r.event.action & ActionType.UPDATE_NODE_TAINT]
    assert (added.event, added.hint) == (TAINT_UPDATE, None)


def test_a_plugin_already_watching_taints_gets_no_second_taint_registration() -> None:
    # TaintToleration registers Node Add|UpdateNodeTaint with its own hint.
    registrations = _registered_by(_default_profile().queueing_hints(), "TaintToleration")
    taint_watchers = [r for r in registrations if r.event.action & ActionType.UPDATE_NODE_TAINT]
    assert len(taint_watchers) == 1 and taint_watchers[0].hint is not None


def test_a_plugin_not_watching_node_adds_gets_no_taint_registration() -> None:
    # SchedulingGates only cares about its pod's gates being removed.
    registrations = _registered_by(_default_profile().queueing_hints(), "SchedulingGates")
    assert registrations
    assert all(r.event.resource is not EventResource.NODE for r in registrations)
