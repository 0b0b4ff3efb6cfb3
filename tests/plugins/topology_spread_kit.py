"""Builders shared by the PodTopologySpread tests: constraints, pods, zoned nodes, and running
the plugin's Filter/Score in both forms."""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

import numpy as np

from plugins.pod_topology_spread import PodTopologySpread
from plugins.pod_topology_spread import PodTopologySpreadArgs
from scheduler.framework import Code
from scheduler.framework import CycleState
from scheduler.framework import Node
from scheduler.framework import NodeTable
from scheduler.framework import Pod
from scheduler.framework import Status
from scheduler.objects.node import ZONE_LABEL
from scheduler.testing import FakeHandle
from scheduler.testing import build_table
from scheduler.testing import make_node
from scheduler.testing import make_pod
from scheduler.testing.plugin_harness import filter_batch_as_statuses
from scheduler.testing.plugin_harness import filter_each_node
from scheduler.testing.plugin_harness import score_batch
from scheduler.testing.plugin_harness import score_each_node

WEB = {"matchLabels": {"app": "web"}}
UNSET = object()


def spread(
    key: str = ZONE_LABEL,
    max_skew: int = 1,
    action: str = "DoNotSchedule",
    selector: Any = UNSET,
    **extra: Any,
) -> dict[str, Any]:
    """A topologySpreadConstraints entry; the selector defaults to app=web."""
    constraint: dict[str, Any] = {
        "maxSkew": max_skew,
        "topologyKey": key,
        "whenUnsatisfiable": action,
    }
    chosen = WEB if selector is UNSET else selector
    if chosen is not None:
        constraint["labelSelector"] = chosen
    constraint.update(extra)
    return constraint


def incoming(
    *constraints: Mapping[str, Any],
    labels: Mapping[str, str] | None = None,
    namespace: str = "default",
    name: str = "incoming",
    **spec: Any,
) -> Pod:
    """The pod being scheduled (labelled app=web unless told otherwise)."""
    builder = make_pod(name, namespace).labels(**(labels if labels is not None else {"app": "web"}))
    if constraints:
        builder = builder.spec(topologySpreadConstraints=list(constraints))
    if spec:
        builder = builder.spec(**spec)
    return builder.obj()


def running(
    name: str,
    node: str,
    labels: Mapping[str, str] | None = None,
    namespace: str = "default",
    *,
    deleting: bool = False,
    owner: Mapping[str, Any] | None = None,
) -> Pod:
    """A pod bound to `node` (labelled app=web unless told otherwise)."""
    raw = make_pod(name, namespace).labels(**(labels or {"app": "web"})).node(node).dict()
    if deleting:
        raw["metadata"]["deletionTimestamp"] = "2024-01-01T00:00:00Z"
    if owner is not None:
        raw["metadata"]["ownerReferences"] = [dict(owner)]
    return Pod.from_dict(raw)


def owned(pod_raw: dict[str, Any], kind: str, name: str, api_version: str) -> Pod:
    """`pod_raw` with a controller ownerReference."""
    pod_raw["metadata"]["ownerReferences"] = [
        {
            "apiVersion": api_version,
            "kind": kind,
            "name": name,
            "uid": f"uid-{name}",
            "controller": True,
        }
    ]
    return Pod.from_dict(pod_raw)


def zoned(name: str, zone: str | None, **labels: str) -> Node:
    """A node in `zone` (no zone label when None) with extra labels."""
    builder = make_node(name).labels(**labels)
    if zone is not None:
        builder = builder.zone(zone)
    return builder.obj()


def plugin_for(
    table: NodeTable,
    args: PodTopologySpreadArgs | None = None,
    listers: Mapping[str, Sequence[Mapping[str, Any]]] | None = None,
    gates: Mapping[str, bool] | None = None,
) -> PodTopologySpread:
    return PodTopologySpread(args, FakeHandle(table, listers=listers, gates=gates))


def filter_outcomes(
    nodes: Sequence[Node],
    pods: Sequence[Pod],
    pod: Pod,
    args: PodTopologySpreadArgs | None = None,
    gates: Mapping[str, bool] | None = None,
) -> dict[str, Status]:
    """Filter status per node name; asserts that both Filter forms agree."""
    table = build_table(nodes, pods)
    plugin = plugin_for(table, args, gates=gates)
    state = CycleState()
    _, status = plugin.pre_filter(state, pod, table)
    if status.is_skip:
        return {name: Status() for name in table.names}
    assert status.is_success, status
    each = filter_each_node(plugin, state, pod, table)
    batch = filter_batch_as_statuses(plugin, state, pod, table)
    assert each == batch
    return dict(zip(table.names, each, strict=True))


def brief(status: Status) -> str:
    """pass / skew / label, for compact expectations."""
    if status.is_success:
        return "pass"
    if status.code is Code.UNSCHEDULABLE_AND_UNRESOLVABLE:
        return "label"
    assert status.code is Code.UNSCHEDULABLE, status
    return "skew"


def raw_and_normalized_scores(
    plugin: PodTopologySpread, pod: Pod, table: NodeTable
) -> tuple[dict[str, int], dict[str, int]] | None:
    """Raw and normalized scores per node over every row; None when PreScore skips.

    Asserts that both Score forms agree on the raw scores.
    """
    state = CycleState()
    rows = table.all_rows()
    status = plugin.pre_score(state, pod, table, rows)
    if status.is_skip:
        return None
    assert status.is_success, status
    each = score_each_node(plugin, state, pod, table)
    batch = score_batch(plugin, state, pod, table)
    assert each == batch
    scores = np.asarray(batch, dtype=np.int64)
    extensions = plugin.score_extensions()
    assert extensions.normalize_score(state, pod, table, rows, scores).is_success
    return (
        dict(zip(table.names, batch, strict=True)),
        dict(zip(table.names, (int(s) for s in scores), strict=True)),
    )


MISSING_LABEL_STATUS = Status(
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
    "node(s) didn't match pod topology spread constraints (missing required label)",
)
CONSTRAINTS_NOT_MATCH_STATUS = Status(
    Code.UNSCHEDULABLE, "node(s) didn't match pod topology spread constraints"
)
