"""LoadAware: Trimaran's TargetLoadPacking and LoadVariationRiskBalancing over fed-in load."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from pydantic import ValidationError

from plugins.load_aware import SPEC
from plugins.load_aware import LoadAware
from plugins.load_aware import LoadAwareArgs
from plugins.load_aware.demand import predicted_cpu_millis
from plugins.load_aware.formulas import resource_risk_score
from plugins.load_aware.formulas import target_load_packing
from plugins.load_aware.plugin import CPU_STD
from plugins.load_aware.plugin import CPU_UTIL
from plugins.load_aware.plugin import MEMORY_STD
from plugins.load_aware.plugin import MEMORY_UTIL
from scheduler.framework import BatchScorePlugin
from scheduler.framework import CycleState
from scheduler.framework import Pod
from scheduler.framework import ScorePlugin
from scheduler.testing import FakeClock
from scheduler.testing import build_table
from scheduler.testing import make_node
from scheduler.testing import make_pod
from scheduler.testing.plugin_harness import score_batch
from scheduler.testing.plugin_harness import score_each_node
from tests.plugins.background_handles import RecordingHandle
from tests.plugins.reported_metrics import reported
from tests.plugins.row_selections import draw_rows

RISK: dict[str, object] = {"mode": "LoadVariationRiskBalancing"}


def plugin_over(
    nodes: int, args: dict[str, object] | None = None, clock: FakeClock | None = None
) -> tuple[LoadAware, RecordingHandle]:
    table = build_table(
        [make_node(f"n{i}").capacity(cpu="4", memory="8Gi").obj() for i in range(nodes)]
    )
    handle = RecordingHandle(table, clock=clock or FakeClock())
    return LoadAware(LoadAwareArgs.model_validate(args or {}), handle), handle


def test_spec_and_defaults() -> None:
    plugin, handle = plugin_over(1)
    assert SPEC.name == "LoadAware"
    assert SPEC.extension_points == ["PreScore", "Score", "Reserve"]
    assert isinstance(plugin, ScorePlugin) and isinstance(plugin, BatchScorePlugin)
    assert plugin.events_to_register() == []
    assert [name for name, _ in handle.background] == ["LoadAware-prometheus"]
    assert plugin.source.queries.keys() == {CPU_UTIL}
    risk, _ = plugin_over(1, RISK)
    assert risk.source.queries.keys() == {CPU_UTIL, CPU_STD, MEMORY_UTIL, MEMORY_STD}


def test_args_are_camel_case_and_checked() -> None:
    args = LoadAwareArgs.model_validate(
        {"targetUtilization": 70, "defaultRequests": {"cpu": "500m"}, "prometheus": {"retries": 0}}
    )
    assert args.target_utilization == 70 and args.default_requests.cpu_millis == 500
    for bad, field in [
        ({"targetUtilisation": 70}, "targetUtilisation"),
        ({"targetUtilization": 100}, "targetUtilization"),
        ({"mode": "Packing"}, "mode"),
        ({"defaultRequests": {"cpu": "lots"}}, "defaultRequests.cpu"),
        ({"defaultRequests": {"memory": "1Gi"}}, "defaultRequests.memory"),
        ({"safeVarianceSensitivity": 0}, "safeVarianceSensitivity"),
        ({"queries": {"cpu": "up"}}, "queries.cpu"),
    ]:
        with pytest.raises(ValidationError, match=field.replace(".", "\\.")):
            LoadAwareArgs.model_validate(bad)


def test_target_load_packing_rises_to_the_target_then_falls() -> None:
    # 4 cores, no pod demand: the measured load alone.
    assert [target_load_packing(u, 4000, 0, 40) for u in (0, 20, 40, 70, 100, 101)] == [
        40, 70, 100, 20, 0, 0,
    ]  # fmt: skip
    # A 1-core pod on an idle 4-core node: 25 % predicted, (60 * 25 / 40 + 40) = 77.5 -> 78.
    assert target_load_packing(0, 4000, 1000, 40) == 78


def test_predicted_cpu_prefers_limits_then_scaled_requests_then_the_default() -> None:
    pod = Pod.from_dict(
        {
            "metadata": {"name": "p"},
            "spec": {
                "containers": [
                    {"name": "a", "resources": {"limits": {"cpu": "2"}, "requests": {"cpu": "1"}}},
                    {"name": "b", "resources": {"requests": {"cpu": "101m"}}},
                    {"name": "c"},
                ],
                "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "8"}}}],
                "overhead": {"cpu": "50m"},
            },
        }
    )
    # 2000 + round(151.5) + 1000 + 50
    assert predicted_cpu_millis(pod, 1000, 1.5) == 3202


def test_risk_score_of_mean_and_deviation() -> None:
    # mu = (1000 + 1000) / 4000 = 0.5, sigma = 400 / 4000 = 0.1: (1 - 0.3) * 100
    assert resource_risk_score(1000, 400, 1000, 4000, 1, 1) == pytest.approx(70.0)
    # sensitivity 2 takes the square root of sigma: 0.1 ** 0.5 = 0.316...
    assert resource_risk_score(1000, 400, 1000, 4000, 1, 2) == pytest.approx(59.19, abs=0.01)
    assert resource_risk_score(1000, 400, 1000, 0, 1, 1) == 0.0


def test_packing_picks_the_node_nearest_the_target_and_recent_pods_count() -> None:
    clock = FakeClock()
    plugin, handle = plugin_over(3, clock=clock)
    plugin.source.merge(CPU_UTIL, {"n0": 5.0, "n1": 30.0, "n2": 90.0}, clock.now())
    pod = make_pod("p").req(cpu="500m").obj()
    state = CycleState()
    assert plugin.pre_score(state, pod, handle.table, handle.table.all_rows()).is_success
    # 500m * 1.5 = 750m of 4 cores = 18.75 %: n0 at 23.75 % -> round(60 * 23.75 / 40 + 40) =
    # 76; n1 past the target at 48.75 % -> round(40 * 51.25 / 60) = 34; n2 past 100 % -> 0.
    assert score_each_node(plugin, state, pod, handle.table) == [76, 34, 0]
    plugin.reserve(state, pod, "n0")
    # n0 now also carries the pod just placed: 42.5 % -> round(40 * 57.5 / 60) = 38.
    assert score_batch(plugin, state, pod, handle.table) == [38, 34, 0]
    clock.advance(61)
    plugin.source.merge(CPU_UTIL, {"n0": 5.0, "n1": 30.0, "n2": 90.0}, clock.now())
    # A minute after a newer measurement, the pod is taken to show in it.
    assert score_batch(plugin, state, pod, handle.table) == [76, 34, 0]
    plugin.reserve(state, pod, "n0")
    plugin.unreserve(state, pod, "n0")
    assert score_each_node(plugin, state, pod, handle.table) == [76, 34, 0]


def test_stale_data_means_no_part_in_scoring() -> None:
    clock = FakeClock()
    plugin, handle = plugin_over(2, clock=clock)
    plugin.source.merge(CPU_UTIL, {"n0": 5.0, "n1": 30.0}, clock.now())
    labels = {"profile": "default-scheduler", "plugin": "LoadAware"}
    before = reported(plugin, "kube_pyscheduler_plugin_neutral_scores_total", **labels)
    clock.advance(61)
    pod = make_pod("p").obj()
    status = plugin.pre_score(CycleState(), pod, handle.table, handle.table.all_rows())
    assert status.is_skip
    after = reported(plugin, "kube_pyscheduler_plugin_neutral_scores_total", **labels)
    assert after == (before or 0) + 1
    assert score_batch(plugin, CycleState(), pod, handle.table) == [0, 0]
    assert score_each_node(plugin, CycleState(), pod, handle.table) == [0, 0]


maybe_percent = st.one_of(st.none(), st.floats(0, 130, allow_nan=False))


@settings(max_examples=60, deadline=None)
@given(data=st.data(), risk=st.booleans())
def test_per_node_and_batch_forms_agree(data: st.DataObject, risk: bool) -> None:
    clock = FakeClock()
    size = data.draw(st.integers(1, 6), label="nodes")
    cpus = data.draw(
        st.lists(st.sampled_from(["0", "1", "3500m", "64"]), min_size=size, max_size=size)
    )
    mems = data.draw(st.lists(st.sampled_from(["0", "1Gi", "64Gi"]), min_size=size, max_size=size))
    nodes = [
        make_node(f"n{i}").capacity(cpu=c, memory=m).obj()
        for i, (c, m) in enumerate(zip(cpus, mems, strict=True))
    ]
    handle = RecordingHandle(build_table(nodes), clock=clock)
    args = LoadAwareArgs.model_validate(
        {
            "mode": "LoadVariationRiskBalancing" if risk else "TargetLoadPacking",
            "targetUtilization": data.draw(st.integers(1, 99), label="target"),
            "safeVarianceMargin": data.draw(st.floats(0, 3), label="margin"),
            "safeVarianceSensitivity": data.draw(st.floats(0.1, 4), label="sensitivity"),
        }
    )
    plugin = LoadAware(args, handle)
    for query in plugin.source.queries:
        values = data.draw(st.lists(maybe_percent, min_size=size, max_size=size), label=query)
        answer = {f"n{i}": v for i, v in enumerate(values) if v is not None}
        plugin.source.merge(query, answer, clock.now() - data.draw(st.sampled_from([0, 30, 90])))
    pod = make_pod("p").req(cpu=data.draw(st.sampled_from(["0", "250m", "2"])), memory="1Gi").obj()
    for i in range(data.draw(st.integers(0, 3), label="placed")):
        plugin.reserve(CycleState(), make_pod(f"r{i}").req(cpu="1").obj(), f"n{i % size}")
    rows = draw_rows(data, size)
    state = CycleState()
    plugin.pre_score(state, pod, handle.table, handle.table.all_rows())
    per_node = score_each_node(plugin, state, pod, handle.table)
    assert score_batch(plugin, state, pod, handle.table, rows) == [per_node[r] for r in rows]
    assert all(0 <= s <= 100 for s in per_node)
    assert np.asarray(per_node).dtype == np.int64 or all(isinstance(s, int) for s in per_node)
