"""PodTopologySpread on generated clusters: the batch and per-node forms agree with each other
and with a plain reading of upstream's rules that recounts every pod for every node."""

from __future__ import annotations

import math
from collections.abc import Mapping
from collections.abc import Sequence
from decimal import ROUND_HALF_UP
from decimal import Decimal
from typing import Any

import numpy as np
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from plugins.helpers import DO_NOT_SCHEDULE_EFFECTS
from plugins.helpers import RequiredNodeAffinity
from plugins.pod_topology_spread import PodTopologySpread
from scheduler.framework import Code
from scheduler.framework import CycleState
from scheduler.framework import Node
from scheduler.framework import Pod
from scheduler.framework import Status
from scheduler.objects.labels import LabelSelector
from scheduler.objects.labels import Requirement
from scheduler.objects.labels import parse_label_selector
from scheduler.objects.node import HOSTNAME_LABEL
from scheduler.objects.node import ZONE_LABEL
from scheduler.objects.taints import first_untolerated
from scheduler.testing import FakeHandle
from scheduler.testing import build_table
from scheduler.testing import make_node
from scheduler.testing.plugin_harness import filter_batch_as_statuses
from scheduler.testing.plugin_harness import filter_each_node
from scheduler.testing.plugin_harness import score_batch
from scheduler.testing.plugin_harness import score_each_node
from tests.plugins.row_selections import draw_rows
from tests.plugins.topology_spread_kit import CONSTRAINTS_NOT_MATCH_STATUS
from tests.plugins.topology_spread_kit import MISSING_LABEL_STATUS
from tests.plugins.topology_spread_kit import incoming
from tests.plugins.topology_spread_kit import owned
from tests.plugins.topology_spread_kit import running

KEYS = (ZONE_LABEL, "rack", HOSTNAME_LABEL)
SELECTORS: list[dict[str, Any] | None] = [
    {"matchLabels": {"app": "web"}},
    {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "db"]}]},
    {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["db"]}]},
    {},
    None,
]
RS_SELECTOR = {"matchLabels": {"app": "web"}}


# ---- generated clusters --------------------------------------------------------------------


@st.composite
def nodes(draw: st.DrawFn) -> list[Node]:
    count = draw(st.integers(1, 7), label="node count")
    result = []
    for i in range(count):
        builder = make_node(f"n{i}")
        zone = draw(st.sampled_from(["a", "b", "c", "", None]))
        if zone is not None:
            builder = builder.zone(zone)
        rack = draw(st.sampled_from(["r1", "r2", None]))
        if rack is not None:
            builder = builder.label("rack", rack)
        if draw(st.booleans()):
            builder = builder.label("pool", "main")
        if draw(st.integers(0, 3)) == 0:
            builder = builder.taint(
                "dedicated", "x", draw(st.sampled_from(["NoSchedule", "PreferNoSchedule"]))
            )
        result.append(builder.obj())
    return result


@st.composite
def existing_pods(draw: st.DrawFn, node_names: Sequence[str]) -> list[Pod]:
    pods = []
    for i in range(draw(st.integers(0, 14), label="pod count")):
        labels = {}
        app = draw(st.sampled_from(["web", "db", None]))
        if app is not None:
            labels["app"] = app
        version = draw(st.sampled_from(["v1", "v2", None]))
        if version is not None:
            labels["version"] = version
        pods.append(
            running(
                f"p{i}",
                draw(st.sampled_from(node_names)),
                labels,
                draw(st.sampled_from(["default", "default", "other"])),
                deleting=draw(st.integers(0, 5)) == 0,
            )
        )
    return pods


@st.composite
def constraint(draw: st.DrawFn) -> dict[str, Any]:
    raw: dict[str, Any] = {
        "maxSkew": draw(st.integers(1, 3)),
        "topologyKey": draw(st.sampled_from(KEYS)),
        "whenUnsatisfiable": draw(st.sampled_from(["DoNotSchedule", "ScheduleAnyway"])),
    }
    selector = draw(st.sampled_from(SELECTORS))
    if selector is not None:
        raw["labelSelector"] = selector
    if draw(st.booleans()):
        raw["matchLabelKeys"] = ["version"]
    if draw(st.booleans()):
        raw["minDomains"] = draw(st.integers(1, 4))
    for policy in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
        choice = draw(st.sampled_from([None, "Honor", "Ignore"]))
        if choice is not None:
            raw[policy] = choice
    return raw


@st.composite
def incoming_pods(draw: st.DrawFn) -> Pod:
    labels = {"app": draw(st.sampled_from(["web", "db"]))}
    version = draw(st.sampled_from(["v1", "v2", None]))
    if version is not None:
        labels["version"] = version
    spec: dict[str, Any] = {}
    if draw(st.booleans()):
        spec["nodeSelector"] = {"pool": "main"}
    if draw(st.booleans()):
        spec["tolerations"] = [{"key": "dedicated", "operator": "Exists"}]
    constraints = draw(st.lists(constraint(), max_size=3), label="constraints")
    pod = incoming(*constraints, labels=labels, **spec)
    if not constraints and draw(st.booleans()):
        # No constraints of its own: the system defaults apply through its ReplicaSet.
        pod = owned(dict(pod.raw), "ReplicaSet", "web", "apps/v1")
    return pod


# ---- the reference ---------------------------------------------------------------------------


def _parse(raw: Mapping[str, Any], pod: Pod) -> dict[str, Any]:
    selector = parse_label_selector(raw.get("labelSelector"))
    keys = [k for k in raw.get("matchLabelKeys") or () if k in pod.labels]
    if selector is not None and keys:
        extra = tuple(Requirement(k, "In", frozenset([pod.labels[k]])) for k in keys)
        selector = LabelSelector((*extra, *selector.requirements))
    return {
        "key": raw["topologyKey"],
        "skew": raw["maxSkew"],
        "selector": selector,
        "min_domains": raw.get("minDomains") or 1,
        "affinity": raw.get("nodeAffinityPolicy", "Honor") == "Honor",
        "taints": raw.get("nodeTaintsPolicy", "Ignore") == "Honor",
    }


SYSTEM = [
    {"topologyKey": HOSTNAME_LABEL, "maxSkew": 3, "whenUnsatisfiable": "ScheduleAnyway"},
    {"topologyKey": ZONE_LABEL, "maxSkew": 5, "whenUnsatisfiable": "ScheduleAnyway"},
]


def _constraints(pod: Pod, action: str) -> list[dict[str, Any]]:
    if pod.topology_spread_constraints:
        raws = pod.topology_spread_constraints
        return [_parse(r, pod) for r in raws if r["whenUnsatisfiable"] == action]
    if action != "ScheduleAnyway" or "ownerReferences" not in pod.raw["metadata"]:
        return []
    selector = parse_label_selector(RS_SELECTOR)
    return [{**_parse(r, pod), "selector": selector} for r in SYSTEM]


def _count(pods: Sequence[Pod], node: str, selector: LabelSelector | None, namespace: str) -> int:
    if selector is None or not selector.requirements:
        return 0
    return sum(
        1
        for p in pods
        if p.node_name == node
        and p.namespace == namespace
        and not p.deleting
        and selector.matches(p.labels)
    )


def _included(c: Mapping[str, Any], pod: Pod, node: Node) -> bool:
    if c["affinity"] and not RequiredNodeAffinity.of_pod(pod).matches(node):
        return False
    untolerated = first_untolerated(node.taints, pod.tolerations, DO_NOT_SCHEDULE_EFFECTS)
    return not (c["taints"] and untolerated is not None)


def _self_matches(c: Mapping[str, Any], pod: Pod) -> bool:
    return c["selector"] is not None and c["selector"].matches(pod.labels)


def reference_filter(nodes: Sequence[Node], pods: Sequence[Pod], pod: Pod) -> dict[str, Status]:
    hard = _constraints(pod, "DoNotSchedule")
    counts: list[dict[str, int]] = [{} for _ in hard]
    for node in nodes:
        if not all(c["key"] in node.labels for c in hard):
            continue
        for i, c in enumerate(hard):
            if _included(c, pod, node):
                value = node.labels[c["key"]]
                counts[i][value] = counts[i].get(value, 0) + _count(
                    pods, node.name, c["selector"], pod.namespace
                )
    result = {}
    for node in nodes:
        status = Status()
        for i, c in enumerate(hard):
            if c["key"] not in node.labels:
                status = MISSING_LABEL_STATUS
                break
            minimum = min(counts[i].values()) if len(counts[i]) >= c["min_domains"] else 0
            here = counts[i].get(node.labels[c["key"]], 0)
            if here + int(_self_matches(c, pod)) - minimum > c["skew"]:
                status = CONSTRAINTS_NOT_MATCH_STATUS
                break
        result[node.name] = status
    return result


def _round(value: float) -> int:
    return int(Decimal(value).quantize(Decimal(1), rounding=ROUND_HALF_UP))


def reference_scores(
    nodes: Sequence[Node], pods: Sequence[Pod], pod: Pod, scored: Sequence[str]
) -> tuple[list[int], list[int]] | None:
    soft = _constraints(pod, "ScheduleAnyway")
    if not soft:
        return None
    require_all = bool(pod.topology_spread_constraints)
    by_name = {n.name: n for n in nodes}
    candidates = [by_name[name] for name in scored]

    def has_keys(node: Node) -> bool:
        return all(c["key"] in node.labels for c in soft)

    ignored = {n.name for n in candidates if require_all and not has_keys(n)}
    kept = [n for n in candidates if n.name not in ignored]
    weights, counts = [], []
    for c in soft:
        domains = {n.labels.get(c["key"], "") for n in kept}
        size = len(kept) if c["key"] == HOSTNAME_LABEL else len(domains)
        weights.append(math.log(size + 2))
        per_domain = dict.fromkeys(domains, 0)
        for node in nodes:
            if (require_all and not has_keys(node)) or not _included(c, pod, node):
                continue
            value = node.labels.get(c["key"], "")
            if value in per_domain and c["key"] != HOSTNAME_LABEL:
                per_domain[value] += _count(pods, node.name, c["selector"], pod.namespace)
        counts.append(per_domain)
    raw = []
    for node in candidates:
        if node.name in ignored:
            raw.append(0)
            continue
        total = 0.0
        for c, weight, per_domain in zip(soft, weights, counts, strict=True):
            label = node.labels.get(c["key"])
            if label is None:
                continue
            if c["key"] == HOSTNAME_LABEL:
                count = _count(pods, node.name, c["selector"], pod.namespace)
            else:
                count = per_domain[label]
            total += float(count) * weight + float(c["skew"] - 1)
        raw.append(_round(total))
    considered = [s for n, s in zip(candidates, raw, strict=True) if n.name not in ignored]
    low = min(considered, default=0)
    high = max([0, *considered])
    normalized = []
    for node, score in zip(candidates, raw, strict=True):
        if node.name in ignored:
            normalized.append(0)
        elif high == 0:
            normalized.append(100)
        else:
            normalized.append(100 * (high + low - score) // high)
    return raw, normalized


# ---- the properties ----------------------------------------------------------------------


def _plugin(table: Any) -> PodTopologySpread:
    web_rs = {
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"selector": RS_SELECTOR},
    }
    return PodTopologySpread(None, FakeHandle(table, listers={"replicasets": [web_rs]}))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_filter_forms_agree_with_the_reference(data: st.DataObject) -> None:
    cluster = data.draw(nodes())
    pods = data.draw(existing_pods([n.name for n in cluster]))
    pod = data.draw(incoming_pods())
    table = build_table(cluster, pods)
    plugin = _plugin(table)
    state = CycleState()
    _, status = plugin.pre_filter(state, pod, table)
    expected = reference_filter(cluster, pods, pod)
    if status.is_skip:
        assert all(s.is_success for s in expected.values())
        return
    assert status.is_success
    each = filter_each_node(plugin, state, pod, table)
    assert dict(zip(table.names, each, strict=True)) == expected
    rows = draw_rows(data, table.size)
    batch = filter_batch_as_statuses(plugin, state, pod, table, rows)
    assert batch == [each[row] for row in rows.tolist()]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_score_forms_agree_with_the_reference(data: st.DataObject) -> None:
    cluster = data.draw(nodes())
    pods = data.draw(existing_pods([n.name for n in cluster]))
    pod = data.draw(incoming_pods())
    table = build_table(cluster, pods)
    plugin = _plugin(table)
    rows = draw_rows(data, table.size)
    state = CycleState()
    status = plugin.pre_score(state, pod, table, rows)
    expected = reference_scores(cluster, pods, pod, [table.names[r] for r in rows.tolist()])
    if status.is_skip:
        assert expected is None or not len(rows)
        return
    assert status.is_success
    assert expected is not None
    each = score_each_node(plugin, state, pod, table)
    batch = score_batch(plugin, state, pod, table, rows)
    assert batch == [each[row] for row in rows.tolist()]
    assert batch == expected[0]
    scores = np.asarray(batch, dtype=np.int64)
    assert plugin.normalize_score(state, pod, table, rows, scores).is_success
    assert scores.tolist() == expected[1]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_forms_agree_after_add_and_remove_pod(data: st.DataObject) -> None:
    cluster = data.draw(nodes())
    pods = data.draw(existing_pods([n.name for n in cluster]))
    pod = data.draw(incoming_pods())
    table = build_table(cluster, pods)
    plugin = _plugin(table)
    state = CycleState()
    _, status = plugin.pre_filter(state, pod, table)
    if not status.is_success:
        return
    extensions = plugin.pre_filter_extensions()
    for other in data.draw(existing_pods([n.name for n in cluster]), label="changes"):
        info = table.node_infos[table.names.index(other.node_name)]
        change = extensions.add_pod if data.draw(st.booleans()) else extensions.remove_pod
        assert change(state, pod, other, info).is_success
    each = filter_each_node(plugin, state, pod, table)
    assert filter_batch_as_statuses(plugin, state, pod, table) == each
    assert {s.code for s in each} <= {
        Code.SUCCESS,
        Code.UNSCHEDULABLE,
        Code.UNSCHEDULABLE_AND_UNRESOLVABLE,
    }
