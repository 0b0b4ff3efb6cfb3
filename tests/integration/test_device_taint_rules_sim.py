"""DeviceTaintRules in the whole scheduler against the in-memory cluster: with the
DRADeviceTaintRules gate on, the scheduler watches them, keeps tainted devices from pods, and
retries those pods when a rule goes; with the gate at its v1.36 default (off), as upstream, a
rule changes nothing."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.config.feature_gates import FeatureGates
from scheduler.testing import make_node
from scheduler.testing import make_pod
from scheduler.testing.dra_builders import device
from scheduler.testing.dra_builders import make_claim
from scheduler.testing.dra_builders import make_device_class
from scheduler.testing.dra_builders import make_device_taint_rule
from scheduler.testing.dra_builders import make_slice
from scheduler.testing.dra_builders import with_claims
from tests.integration.harness import Harness

DRIVER = "gpu.example.com"
FAULTY = {"key": "example.com/faulty", "value": "ecc", "effect": "NoExecute"}
RULES_ON = FeatureGates({"DRADeviceTaintRules": True})
NO_DEVICE = (
    "0/2 nodes are available: 2 cannot allocate all claims. still not schedulable, "
    "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
)


# Every GPU of the driver is out of service.
ALL_GPUS_OUT = make_device_taint_rule("gpus-out", FAULTY, driver=DRIVER)


def _objects(rule: dict[str, Any] = ALL_GPUS_OUT) -> list[dict[str, Any]]:
    nodes = [make_node(name).dict() for name in ("node-a", "node-b")]
    slices = [make_slice(n, DRIVER, [device("gpu-0")], node=n) for n in ("node-a", "node-b")]
    pod = with_claims(make_pod("p").dict(), claims={"gpu": "c"})
    return [
        *nodes,
        make_device_class("gpu", f'device.driver == "{DRIVER}"'),
        *slices,
        make_claim("c").request("gpu", "gpu").dict(),
        rule,
        pod,
    ]


async def test_with_the_gate_on_a_rule_keeps_its_devices_until_it_is_deleted() -> None:
    async with Harness(features=RULES_ON) as h:
        assert "devicetaintrules" in h.scheduler.informers
        h.create(_objects())
        assert await h.schedule_active() == 1
        assert h.node_of("default", "p") is None
        assert h.scheduled_message("default", "p") == NO_DEVICE
        await h.sim.delete("devicetaintrules", "", "gpus-out")
        # The rule's deletion reaches the pod as a ResourceSlice update; past its backoff it
        # is tried again, and the devices are free.
        h.clock.advance(2)
        assert await h.schedule_active() == 1
        assert h.node_of("default", "p") in ("node-a", "node-b")


@pytest.mark.parametrize(("out", "spared"), [("node-a", "node-b"), ("node-b", "node-a")])
async def test_a_rule_that_spares_one_pool_sends_the_pod_there(out: str, spared: str) -> None:
    async with Harness(features=RULES_ON) as h:
        h.create(_objects(make_device_taint_rule(f"{out}-out", FAULTY, pool=out)))
        assert await h.schedule_active() == 1
        assert h.node_of("default", "p") == spared


async def test_at_the_default_gate_rules_are_not_watched_and_change_nothing() -> None:
    async with Harness() as h:
        assert "devicetaintrules" not in h.scheduler.informers
        h.create(_objects())
        assert await h.schedule_active() == 1
        assert h.node_of("default", "p") in ("node-a", "node-b")
