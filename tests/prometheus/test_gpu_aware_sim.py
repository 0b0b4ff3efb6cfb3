"""The whole scheduler with GPUAware reading DCGM metrics through a real Prometheus: a GPU pod
lands on the least utilised GPU node when spreading and on the most utilised when packing."""

from __future__ import annotations

import asyncio
import time

import pytest

from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.integration.harness import Harness
from tests.prometheus.server import GPUS
from tests.prometheus.server import Exporter

GPU = "nvidia.com/gpu"


def profile(prometheus: str, strategy: str) -> dict[str, object]:
    return {
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "plugins": {"multiPoint": {"enabled": [{"name": "GPUAware"}]}},
                "pluginConfig": [
                    {
                        "name": "GPUAware",
                        "args": {
                            "strategy": strategy,
                            "prometheus": {
                                "address": prometheus,
                                "intervalSeconds": 1,
                                "timeoutSeconds": 1,
                            },
                        },
                    }
                ],
            }
        ]
    }


async def until_fresh(h: Harness, deadline_seconds: float = 20.0) -> None:
    """Until the plugin has data: its first refresh runs at start; later ones on the clock."""
    labels = {"profile": "default-scheduler", "plugin": "GPUAware"}
    deadline = time.monotonic() + deadline_seconds
    registry = h.scheduler.metrics.registry
    while registry.get_sample_value("kube_pyscheduler_plugin_prometheus_stale", labels):
        assert time.monotonic() < deadline, "GPUAware never got data from Prometheus"
        h.clock.advance(1)
        await asyncio.sleep(0.05)


@pytest.mark.parametrize(("strategy", "chosen"), [("Spread", "g1"), ("Pack", "g0")])
async def test_a_gpu_pod_follows_the_strategy(
    prometheus: str, running_exporter: Exporter, strategy: str, chosen: str
) -> None:
    # g0 busy (70 %, 20 % memory free), g1 idle (10 %, 90 %), g2 in between: see GPUS.
    assert set(GPUS) == {"g0", "g1", "g2"}
    nodes = [
        make_node(name).capacity(cpu="16", memory="64Gi", pods="110", **{GPU: "4"}).dict()
        for name in GPUS
    ]
    async with Harness(profile(prometheus, strategy)) as h:
        await until_fresh(h)
        h.create([*nodes, make_pod("train").req(cpu="1", **{GPU: "1"}).dict()])
        await h.schedule_active()
        assert h.node_of("default", "train") == chosen
