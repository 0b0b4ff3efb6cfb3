"""InterPodAffinity registration: args, PluginSpec, events and QueueingHints."""

from __future__ import annotations

from typing import Any

import pydantic
import pytest

from plugins.inter_pod_affinity import SPEC
from plugins.inter_pod_affinity import InterPodAffinity
from plugins.inter_pod_affinity import InterPodAffinityArgs
from scheduler.framework import ActionType
from scheduler.framework import ClusterEvent
from scheduler.framework import EventResource
from scheduler.framework import Node
from scheduler.framework import Pod
from scheduler.framework import QueueingHint
from scheduler.framework.events import ASSIGNED_POD_ADD
from scheduler.framework.events import ASSIGNED_POD_DELETE
from scheduler.framework.events import ASSIGNED_POD_UPDATE
from scheduler.framework.events import NODE_ADD
from scheduler.objects.node import ZONE_LABEL
from scheduler.testing import FakeHandle
from scheduler.testing import make_node
from scheduler.testing import make_pod

QUEUE = QueueingHint.QUEUE
SKIP = QueueingHint.QUEUE_SKIP
HOST = "kubernetes.io/hostname"


# ---- args and spec -------------------------------------------------------------------------


def test_args_defaults_are_upstreams() -> None:
    args = InterPodAffinityArgs()
    assert args.hard_pod_affinity_weight == 1
    assert args.ignore_preferred_terms_of_existing_pods is False


def test_args_read_camel_case() -> None:
    args = InterPodAffinityArgs.model_validate(
        {"hardPodAffinityWeight": 100, "ignorePreferredTermsOfExistingPods": True}
    )
    assert (args.hard_pod_affinity_weight, args.ignore_preferred_terms_of_existing_pods) == (
        100,
        True,
    )


@pytest.mark.parametrize("weight", [-1, 101])
def test_args_reject_weights_out_of_range(weight: int) -> None:
    with pytest.raises(pydantic.ValidationError) as caught:
        InterPodAffinityArgs.model_validate({"hardPodAffinityWeight": weight})
    error = caught.value.errors()[0]
    assert error["loc"] == ("hardPodAffinityWeight",)
    assert "not in valid range [0, 100]" in error["msg"]


def test_args_reject_unknown_fields() -> None:
    with pytest.raises(pydantic.ValidationError):
        InterPodAffinityArgs.model_validate({"hardPodAffinityWieght": 3})


def test_spec_describes_the_plugin() -> None:
    assert SPEC.name == "InterPodAffinity"
    assert SPEC.plugin_class is InterPodAffinity
    assert SPEC.args_model is InterPodAffinityArgs
    assert SPEC.watches == ("namespaces",)
    assert SPEC.extension_points == ["PreFilter", "Filter", "PreScore", "Score"]
    plugin = SPEC.create(SPEC.default_args(), FakeHandle())
    assert plugin.name == "InterPodAffinity"


# ---- events --------------------------------------------------------------------------------


def plugin(namespaces: list[dict[str, Any]] | None = None) -> InterPodAffinity:
    return InterPodAffinity(
        InterPodAffinityArgs(), FakeHandle(listers={"namespaces": namespaces or []})
    )


def test_registers_pod_and_node_label_events() -> None:
    registered = [r.event for r in plugin().events_to_register()]
    assert registered == [
        ClusterEvent(
            EventResource.ASSIGNED_POD,
            ActionType.ADD | ActionType.UPDATE_POD_LABEL | ActionType.DELETE,
        ),
        # Of an unscheduled pod, only label changes: the pending pod's own, a nominated pod's.
        ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE_POD_LABEL),
        ClusterEvent(EventResource.NODE, ActionType.ADD | ActionType.UPDATE_NODE_LABEL),
    ]
    assert registered[0].matches(ASSIGNED_POD_ADD)
    assert registered[0].matches(ASSIGNED_POD_DELETE)
    assert registered[0].matches(
        ClusterEvent(EventResource.ASSIGNED_POD, ActionType.UPDATE_POD_LABEL)
    )
    assert not registered[0].matches(
        ClusterEvent(EventResource.ASSIGNED_POD, ActionType.UPDATE_POD_TOLERATIONS)
    )
    assert registered[1].matches(
        ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.UPDATE_POD_LABEL)
    )
    assert not registered[1].matches(ClusterEvent(EventResource.UNSCHEDULED_POD, ActionType.ADD))
    assert registered[2].matches(NODE_ADD)
    assert not registered[2].matches(ClusterEvent(EventResource.NODE, ActionType.UPDATE_NODE_TAINT))
    assert ASSIGNED_POD_UPDATE.action & ActionType.UPDATE_POD_LABEL


def pod_hint(
    pending: Pod, old: Pod | None, new: Pod | None, namespaces: list[dict[str, Any]] | None = None
) -> QueueingHint:
    hint = plugin(namespaces).events_to_register()[0].hint
    assert hint is not None
    return hint(pending, old, new)


def node_hint(pending: Pod, old: Node | None, new: Node | None) -> QueueingHint:
    hint = plugin().events_to_register()[2].hint
    assert hint is not None
    return hint(pending, old, new)


WANTS_DB = make_pod("p").pod_affinity("required", ZONE_LABEL, {"app": "db"}).obj()
HATES_WEB = make_pod("p").pod_affinity("required", HOST, {"app": "web"}, anti=True).obj()
PLAIN_WEB = make_pod("p").label("app", "web").obj()
WANTS_DB_HATES_WEB = (
    make_pod("p")
    .pod_affinity("required", ZONE_LABEL, {"app": "db"})
    .pod_affinity("required", HOST, {"app": "web"}, anti=True)
    .obj()
)


def assigned(name: str = "x", **labels: str) -> Pod:
    return make_pod(name).labels(**labels).node("n1").obj()


@pytest.mark.parametrize(
    ("pending", "old", "new", "expected"),
    [
        pytest.param(WANTS_DB, None, assigned(app="db"), QUEUE, id="add-matching-affinity"),
        pytest.param(WANTS_DB, None, assigned(app="web"), SKIP, id="add-not-matching-affinity"),
        pytest.param(
            WANTS_DB,
            None,
            make_pod("x").label("app", "db").obj(),
            SKIP,
            id="unassigned-pod-is-ignored",
        ),
        pytest.param(
            HATES_WEB, None, assigned(app="web"), SKIP, id="add-cannot-help-anti-affinity"
        ),
        pytest.param(
            WANTS_DB,
            assigned(app="web"),
            assigned(app="db"),
            QUEUE,
            id="update-starts-matching-affinity",
        ),
        pytest.param(
            WANTS_DB,
            assigned(app="db"),
            assigned(app="db", v="2"),
            SKIP,
            id="update-already-matched",
        ),
        pytest.param(
            HATES_WEB,
            assigned(app="web"),
            assigned(app="api"),
            QUEUE,
            id="update-stops-matching-anti",
        ),
        pytest.param(
            HATES_WEB,
            assigned(app="api"),
            assigned(app="web"),
            SKIP,
            id="update-starts-matching-anti",
        ),
        pytest.param(
            HATES_WEB, assigned(app="web"), None, QUEUE, id="delete-matching-anti-affinity"
        ),
        pytest.param(HATES_WEB, assigned(app="db"), None, SKIP, id="delete-unrelated"),
        pytest.param(
            make_pod("p").uid("me").label("app", "web").obj(),
            make_pod("p").uid("me").label("app", "web").obj(),
            make_pod("p").uid("me").label("app", "api").obj(),
            QUEUE,
            id="the-pending-pods-own-labels-change",
        ),
        pytest.param(
            HATES_WEB,
            make_pod("x").label("app", "web").nominated("n1").obj(),
            None,
            QUEUE,
            id="delete-of-a-pod-nominated-to-a-node",
        ),
        pytest.param(
            PLAIN_WEB,
            make_pod("x")
            .pod_affinity("required", ZONE_LABEL, {"app": "web"}, anti=True)
            .node("n1")
            .obj(),
            None,
            QUEUE,
            id="delete-of-a-pod-whose-anti-affinity-repelled-the-pending-pod",
        ),
        pytest.param(
            make_pod("p")
            .label("app", "db")
            .pod_affinity("required", ZONE_LABEL, {"app": "db"})
            .obj(),
            assigned(app="db"),
            None,
            QUEUE,
            id="delete-may-make-a-self-selecting-pod-the-first-of-its-group",
        ),
        pytest.param(WANTS_DB, assigned(app="db"), None, SKIP, id="delete-of-an-affinity-peer"),
    ],
)
def test_pod_hint(pending: Pod, old: Pod | None, new: Pod | None, expected: QueueingHint) -> None:
    assert pod_hint(pending, old, new) is expected


def test_pod_hint_uses_the_changed_pods_namespace_labels() -> None:
    pending = (
        make_pod("p")
        .pod_affinity(
            "required", ZONE_LABEL, {"app": "db"}, namespace_selector={"matchLabels": {"t": "x"}}
        )
        .obj()
    )
    namespaces = [
        {"metadata": {"name": "tx", "labels": {"t": "x"}}},
        {"metadata": {"name": "ty", "labels": {"t": "y"}}},
    ]
    in_tx = make_pod("d", "tx").label("app", "db").node("n1").obj()
    in_ty = make_pod("d", "ty").label("app", "db").node("n1").obj()
    assert pod_hint(pending, None, in_tx, namespaces) is QUEUE
    assert pod_hint(pending, None, in_ty, namespaces) is SKIP


def test_pod_hint_accepts_raw_objects() -> None:
    raw = make_pod("x").label("app", "db").node("n1").dict()
    assert pod_hint(WANTS_DB, None, raw) is QUEUE  # type: ignore[arg-type]


def zone_node(zone: str | None = None, **labels: str) -> Node:
    builder = make_node("n1").labels(**labels)
    if zone is not None:
        builder = builder.zone(zone)
    return builder.obj()


@pytest.mark.parametrize(
    ("pending", "old", "new", "expected"),
    [
        pytest.param(WANTS_DB, None, zone_node("a"), QUEUE, id="added-node-with-the-affinity-key"),
        pytest.param(WANTS_DB, None, zone_node(), SKIP, id="added-node-without-the-affinity-key"),
        pytest.param(
            WANTS_DB, zone_node(), zone_node("a"), QUEUE, id="node-gains-the-affinity-key"
        ),
        pytest.param(WANTS_DB, zone_node("a"), zone_node("b"), QUEUE, id="node-changes-domain"),
        pytest.param(
            WANTS_DB, zone_node("a"), zone_node("a", rack="r1"), SKIP, id="unrelated-label"
        ),
        pytest.param(WANTS_DB, zone_node("a"), zone_node(), SKIP, id="node-loses-the-affinity-key"),
        pytest.param(
            HATES_WEB, None, zone_node(), QUEUE, id="any-added-node-may-help-anti-affinity"
        ),
        pytest.param(
            WANTS_DB_HATES_WEB,
            zone_node("a"),
            zone_node("a", rack="r"),
            SKIP,
            id="affinity-and-anti-keys-untouched",
        ),
        pytest.param(
            HATES_WEB,
            zone_node("a"),
            zone_node("a", rack="r"),
            QUEUE,
            id="relabel-may-escape-existing-anti-affinity-of-an-anti-affinity-pod",
        ),
        pytest.param(
            PLAIN_WEB, None, zone_node(), QUEUE, id="added-node-may-escape-existing-anti-affinity"
        ),
        pytest.param(
            PLAIN_WEB,
            zone_node("a"),
            zone_node("b"),
            QUEUE,
            id="relabel-may-escape-existing-anti-affinity",
        ),
        pytest.param(PLAIN_WEB, zone_node("a"), zone_node("a"), SKIP, id="no-label-change"),
    ],
)
def test_node_hint(
    pending: Pod, old: Node | None, new: Node | None, expected: QueueingHint
) -> None:
    assert node_hint(pending, old, new) is expected


def test_node_hint_when_the_anti_affinity_key_is_removed_or_changed() -> None:
    hates_by_host = HATES_WEB
    before = make_node("n1").obj()  # has kubernetes.io/hostname=n1
    raw = make_node("n1").dict()
    del raw["metadata"]["labels"][HOST]
    without_host = Node.from_dict(raw)
    assert node_hint(hates_by_host, before, without_host) is QUEUE
    renamed = make_node("n1").label(HOST, "other").obj()
    assert node_hint(hates_by_host, before, renamed) is QUEUE
