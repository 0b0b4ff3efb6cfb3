"""`explain` for a pod waiting for devices: the Event can only say "cannot allocate all
claims"; explain says, per node, which device was allocated, tainted or out of counters."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduler.app.cli import main
from scheduler.app.configuration import load_effective
from scheduler.app.configuration import plugin_registry
from scheduler.app.explain.render import write
from scheduler.app.scenario import ordered_for_loading
from scheduler.cluster.sim import SimCluster
from scheduler.core.explain.session import explain_in
from scheduler.testing import FakeClock
from scheduler.testing import make_node
from scheduler.testing import make_pod
from scheduler.testing.dra_builders import consuming
from scheduler.testing.dra_builders import device
from scheduler.testing.dra_builders import make_claim
from scheduler.testing.dra_builders import make_counter_slice
from scheduler.testing.dra_builders import make_device_class
from scheduler.testing.dra_builders import make_device_taint_rule
from scheduler.testing.dra_builders import make_slice
from scheduler.testing.dra_builders import tainted
from scheduler.testing.dra_builders import with_claims

DRIVER = "gpu.example.com"


def cluster() -> list[dict[str, Any]]:
    unhealthy = {"key": f"{DRIVER}/unhealthy", "value": "ecc", "effect": "NoSchedule"}
    whole = consuming(device("gpu-0"), "gpu-0", memory="40Gi")
    half = consuming(device("gpu-0-half"), "gpu-0", memory="20Gi")
    return [
        *(make_node(n).capacity(cpu="4", memory="8Gi", pods="10").dict() for n in "abc"),
        make_device_class("gpu", f'device.driver == "{DRIVER}"'),
        make_slice("a-gpus", DRIVER, [device("gpu-0")], node="a"),
        make_slice("b-gpus", DRIVER, [tainted(device("gpu-0"), unhealthy)], node="b"),
        make_counter_slice("c-counters", DRIVER, "c", {"gpu-0": {"memory": "40Gi"}}, node="c"),
        make_slice("c-gpus", DRIVER, [whole, half], node="c", slice_count=2),
        make_claim("held-a")
        .request("gpu", "gpu")
        .allocated("a", ("gpu", DRIVER, "a", "gpu-0"))
        .dict(),
        make_claim("held-c")
        .request("gpu", "gpu")
        .allocated("c", ("gpu", DRIVER, "c", "gpu-0"))
        .dict(),
        make_claim("mine").request("gpu", "gpu").dict(),
        with_claims(make_pod("trainer").dict(), claims={"gpu": "mine"}),
    ]


async def test_each_node_says_what_became_of_its_devices() -> None:
    sim = SimCluster(clock=FakeClock())
    sim.load(ordered_for_loading(cluster()))
    registry = plugin_registry([])
    config, profiles = load_effective(registry)
    explanation = await explain_in(sim, "default", "trainer", config, profiles, registry)
    assert explanation.message.startswith("0/3 nodes are available: 3 cannot allocate all claims.")
    details = {
        node.name: next(v.details for v in node.plugins if v.plugin == "DynamicResources")
        for node in explanation.nodes
    }
    head = "claim default/mine, request gpu (1 device(s)): 1 matching, 0 free on its own: "
    assert details == {
        "a": (head + "a/gpu-0 allocated to another claim",),
        "b": (
            head + "b/gpu-0 has a taint the request does not tolerate "
            "(gpu.example.com/unhealthy=ecc:NoSchedule)",
        ),
        "c": (
            "claim default/mine, request gpu (1 device(s)): 2 matching, 0 free on its own: "
            "c/gpu-0 allocated to another claim; "
            "c/gpu-0-half its partition's counters are used up",
        ),
    }
    # The reasons, which the Event counts, stay upstream's.
    assert {n.verdict.reasons for n in explanation.nodes} == {("cannot allocate all claims",)}
    out = io.StringIO()
    write(explanation, "table", out)
    assert "Why (as the plugins see it):" in out.getvalue()
    assert "  b DynamicResources: claim default/mine" in out.getvalue()


def _rule_tainted_cluster() -> list[dict[str, Any]]:
    """Node a's one GPU, taken out of service by a DeviceTaintRule; node b has none."""
    rule = make_device_taint_rule(
        "a-gpu-out", {"key": "example.com/faulty", "effect": "NoSchedule"}, pool="a"
    )
    return [
        *(make_node(n).capacity(cpu="4", memory="8Gi", pods="10").dict() for n in "ab"),
        make_device_class("gpu", f'device.driver == "{DRIVER}"'),
        make_slice("a-gpus", DRIVER, [device("gpu-0")], node="a"),
        rule,
        make_claim("mine").request("gpu", "gpu").dict(),
        with_claims(make_pod("trainer").dict(), claims={"gpu": "mine"}),
    ]


def test_explain_and_simulate_take_the_daemons_feature_gates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario = tmp_path / "cluster.yaml"
    scenario.write_text(yaml.safe_dump_all(_rule_tainted_cluster()))
    gate = "--feature-gates=DRADeviceTaintRules=true"
    argv = ["explain", "default/trainer", "--scenario", str(scenario), "-o", "json", gate]
    assert main(argv) == 0
    explained = json.loads(capsys.readouterr().out)
    details = {
        node["name"]: next(
            v["details"] for v in node["plugins"] if v["plugin"] == "DynamicResources"
        )
        for node in explained["nodes"]
    }
    head = "claim default/mine, request gpu (1 device(s)): "
    assert details == {
        "a": [
            head + "1 matching, 0 free on its own: a/gpu-0 has a taint the request does not "
            "tolerate (example.com/faulty:NoSchedule, from DeviceTaintRule a-gpu-out)"
        ],
        "b": [head + "no device here matches class gpu and its selectors"],
    }
    argv = ["simulate", str(scenario), "--output", "json", "--no-progress", "--seed", "0"]
    assert main([*argv, gate]) == 0
    [pod] = json.loads(capsys.readouterr().out)["pods"]
    assert pod["node"] in (None, "")
    # Without the gate an API server would not serve the rule: the scenario is refused rather
    # than simulated as if the rule were not there.
    assert main(argv) == 2
    assert capsys.readouterr().err == (
        f'error: {scenario}: DeviceTaintRule "a-gpu-out": served and read only with '
        "--feature-gates=DRADeviceTaintRules=true (off by default in kube-scheduler 1.36)\n"
    )


async def test_free_devices_drawing_on_the_same_counters_are_said_to_compete() -> None:
    """Both partitions of one GPU are free, each on its own; a request for all devices takes
    both, which together want more memory than the GPU holds."""
    halves = [consuming(device(f"gpu-0-part-{i}"), "gpu-0", memory="30Gi") for i in range(2)]
    objects = [
        make_node("c").capacity(cpu="4", memory="8Gi", pods="10").dict(),
        make_device_class("gpu", f'device.driver == "{DRIVER}"'),
        make_counter_slice("c-counters", DRIVER, "c", {"gpu-0": {"memory": "40Gi"}}, node="c"),
        make_slice("c-gpus", DRIVER, halves, node="c", slice_count=2),
        make_claim("mine").request("gpu", "gpu", all_devices=True).dict(),
        with_claims(make_pod("trainer").dict(), claims={"gpu": "mine"}),
    ]
    sim = SimCluster(clock=FakeClock())
    sim.load(ordered_for_loading(objects))
    registry = plugin_registry([])
    config, profiles = load_effective(registry)
    explanation = await explain_in(sim, "default", "trainer", config, profiles, registry)
    [line] = next(
        v.details for v in explanation.node("c").plugins if v.plugin == "DynamicResources"
    )
    assert line == (
        "claim default/mine, request gpu (all devices): 2 matching, 2 free on its own, but those "
        "draw on the same counters (gpu-0/memory), so they may not all be given at once: "
        "c/gpu-0-part-0 free; c/gpu-0-part-1 free"
    )
