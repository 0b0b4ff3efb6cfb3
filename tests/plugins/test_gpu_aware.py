"""GPUAware: spread or pack GPU pods by GPU utilisation and free GPU memory."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from pydantic import ValidationError

from plugins.gpu_aware import SPEC
from plugins.gpu_aware import GPUAware
from plugins.gpu_aware import GPUAwareArgs
from plugins.gpu_aware.plugin import FREE_MEMORY
from plugins.gpu_aware.plugin import GPU_UTIL
from scheduler.framework import CycleState
from scheduler.testing import FakeClock
from scheduler.testing import build_table
from scheduler.testing import make_node
from scheduler.testing import make_pod
from scheduler.testing.plugin_harness import score_batch
from scheduler.testing.plugin_harness import score_each_node
from tests.plugins.background_handles import RecordingHandle
from tests.plugins.row_selections import draw_rows

GPU = "nvidia.com/gpu"


def gpu_plugin(args: dict[str, object], nodes: int = 3) -> tuple[GPUAware, RecordingHandle]:
    table = build_table([make_node(f"g{i}").obj() for i in range(nodes)])
    handle = RecordingHandle(table, clock=FakeClock())
    return GPUAware(GPUAwareArgs.model_validate(args), handle), handle


def test_spec_and_args() -> None:
    assert SPEC.name == "GPUAware"
    assert SPEC.extension_points == ["PreScore", "Score"]
    plugin, _ = gpu_plugin({})
    assert plugin.source.settings.node_label == "Hostname"
    assert plugin.events_to_register() == []
    with pytest.raises(ValidationError, match="cannot both be 0"):
        GPUAwareArgs.model_validate({"utilizationWeight": 0, "freeMemoryWeight": 0})
    with pytest.raises(ValidationError, match="strategy"):
        GPUAwareArgs.model_validate({"strategy": "LeastUtilized"})
    assert GPUAwareArgs.model_validate({"prometheus": {"retries": 1}}).prometheus.node_label == (
        "Hostname"
    )


@pytest.mark.parametrize(("strategy", "expected"), [("Spread", [85, 35, 0]), ("Pack", [15, 65, 0])])
def test_spread_prefers_idle_gpus_and_pack_busy_ones(strategy: str, expected: list[int]) -> None:
    plugin, handle = gpu_plugin({"strategy": strategy})
    now = handle.clock.now()
    plugin.source.merge(GPU_UTIL, {"g0": 10.0, "g1": 70.0}, now)
    plugin.source.merge(FREE_MEMORY, {"g0": 80.0, "g1": 40.0}, now)
    pod = make_pod("train").req(**{GPU: 1}).obj()
    state = CycleState()
    assert plugin.pre_score(state, pod, handle.table, handle.table.all_rows()).is_success
    # Spread: g0 (90 + 80) / 2, g1 (30 + 40) / 2; g2 reports nothing and scores 0.
    assert score_each_node(plugin, state, pod, handle.table) == expected
    assert score_batch(plugin, state, pod, handle.table) == expected


def test_pods_without_gpus_are_ignored() -> None:
    plugin, handle = gpu_plugin({})
    plugin.source.merge(GPU_UTIL, {"g0": 10.0}, handle.clock.now())
    pod = make_pod("web").req(cpu="1").obj()
    assert plugin.pre_score(CycleState(), pod, handle.table, handle.table.all_rows()).is_skip
    assert score_batch(plugin, CycleState(), pod, handle.table) == [0, 0, 0]


maybe_percent = st.one_of(st.none(), st.floats(-10, 120, allow_nan=False))


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_per_node_and_batch_forms_agree(data: st.DataObject) -> None:
    size = data.draw(st.integers(1, 6), label="nodes")
    args = {
        "strategy": data.draw(st.sampled_from(["Spread", "Pack"])),
        "utilizationWeight": data.draw(st.integers(0, 5)),
        "freeMemoryWeight": data.draw(st.integers(1, 5)),
    }
    plugin, handle = gpu_plugin(args, size)
    for query in (GPU_UTIL, FREE_MEMORY):
        values = data.draw(st.lists(maybe_percent, min_size=size, max_size=size), label=query)
        answer = {f"g{i}": v for i, v in enumerate(values) if v is not None}
        plugin.source.merge(query, answer, handle.clock.now())
    pod = make_pod("train").req(**{GPU: 2}).obj()
    rows = draw_rows(data, size)
    per_node = score_each_node(plugin, CycleState(), pod, handle.table)
    assert score_batch(plugin, CycleState(), pod, handle.table, rows) == [per_node[r] for r in rows]
    assert all(0 <= s <= 100 for s in per_node)
