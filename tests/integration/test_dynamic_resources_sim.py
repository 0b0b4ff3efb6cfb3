"""DynamicResources in the whole scheduler against the in-memory cluster: GPUs published by
ResourceSlices, claims made from a template by the cluster's claim controller."""

from __future__ import annotations

from collections import Counter
from typing import Any

from scheduler.app.dra_scenario import claim_gpus
from scheduler.app.dra_scenario import gpu_slices
from scheduler.app.scenario import generate_nodes
from scheduler.app.scenario import generate_pods
from scheduler.app.simulation import SimulationResult
from scheduler.app.simulation import simulate
from scheduler.config import default_config
from scheduler.objects.quantity import parse_quantity
from scheduler.runtime.discovery import PluginRegistry
from scheduler.testing import make_node
from scheduler.testing import make_pod
from scheduler.testing.dra_builders import consuming
from scheduler.testing.dra_builders import device
from scheduler.testing.dra_builders import make_claim
from scheduler.testing.dra_builders import make_claim_template
from scheduler.testing.dra_builders import make_counter_slice
from scheduler.testing.dra_builders import make_device_class
from scheduler.testing.dra_builders import make_slice
from scheduler.testing.dra_builders import with_claims

NODE_SHAPE = {"cpu": "8", "memory": "32Gi", "pods": "110"}


async def run(objects: list[dict[str, Any]]) -> SimulationResult:
    registry = PluginRegistry.discover()
    config, profiles = default_config(registry)
    return await simulate(objects, config, profiles, registry, seed=7)


def allocated_devices(result: SimulationResult) -> list[tuple[str, str, str]]:
    return [
        device
        for claim in result.resource_claims
        if (claim.get("status") or {}).get("allocation")
        for device in allocated_devices_of(claim)
    ]


async def test_forty_one_gpu_pods_on_eight_four_gpu_nodes() -> None:
    nodes = generate_nodes(8, NODE_SHAPE, 0)
    pods = generate_pods(40, {"cpu": "10m"}, "default-scheduler")
    result = await run([*nodes, *gpu_slices(nodes, 4), *pods, *claim_gpus(pods, 1)])
    assert result.count("Scheduled") == 32
    pending = [p for p in result.pods if p.status != "Scheduled"]
    assert len(pending) == 8
    assert {p.message for p in pending} == {
        "0/8 nodes are available: 8 cannot allocate all claims. still not schedulable, "
        "preemption: 0/8 nodes are available: 8 Preemption is not helpful for scheduling."
    }
    devices = allocated_devices(result)
    assert len(devices) == 32 and len(set(devices)) == 32  # no device twice
    assert Counter(p.node for p in result.pods if p.node).most_common(1)[0][1] == 4
    # Every placed pod's claim is reserved for it and allocated on its node.
    by_uid = {p["metadata"]["uid"]: p for p in result.raw_pods}
    for claim in result.resource_claims:
        status = claim.get("status") or {}
        if not status.get("allocation"):
            continue
        [consumer] = status["reservedFor"]
        node = by_uid[consumer["uid"]]["spec"]["nodeName"]
        assert {r["pool"] for r in status["allocation"]["devices"]["results"]} == {node}


def allocated_devices_of(claim: dict[str, Any]) -> list[tuple[str, str, str]]:
    results = claim["status"]["allocation"]["devices"]["results"]
    return [(r["driver"], r["pool"], r["device"]) for r in results]


async def test_two_gpus_on_one_pcie_root_only_where_such_a_pair_exists() -> None:
    driver = "gpu.example.com"

    def gpus(node: str, *roots: str) -> dict[str, Any]:
        return make_slice(
            f"{node}-gpus",
            driver,
            [device(f"gpu-{i}", pcieRoot=root) for i, root in enumerate(roots)],
            node=node,
        )

    pair = make_claim("pair").request("gpus", "gpu", 2).match_attribute(f"{driver}/pcieRoot")
    trainer = with_claims(make_pod("trainer").dict(), templates={"gpus": "pair"})
    result = await run(
        [
            *(make_node(n).capacity(**NODE_SHAPE).dict() for n in ("split-a", "split-b", "paired")),
            make_device_class("gpu", f'device.driver == "{driver}"'),
            gpus("split-a", "pci-0", "pci-1"),
            gpus("split-b", "pci-0", "pci-1", "pci-2"),
            gpus("paired", "pci-0", "pci-1", "pci-1"),
            make_claim_template("pair", pair),
            trainer,
        ]
    )
    [placed] = result.pods
    assert placed.node == "paired"
    [claim] = result.resource_claims
    assert [r["device"] for r in claim["status"]["allocation"]["devices"]["results"]] == [
        "gpu-1",
        "gpu-2",
    ]


async def test_partitioned_gpus_take_pods_until_their_memory_is_used() -> None:
    """Two nodes, each with one 40Gi GPU published whole or as four 10Gi slices. Pods claiming
    a slice or the whole GPU arrive; no node gives out more memory than its GPU has."""
    driver = "gpu.example.com"
    objects: list[dict[str, Any]] = [make_device_class("gpu", f'device.driver == "{driver}"')]
    for node in ("left", "right"):
        objects.append(make_node(node).capacity(**NODE_SHAPE).dict())
        objects.append(
            make_counter_slice(f"{node}-counters", driver, node, {"gpu": {"memory": "40Gi"}})
        )
        partitions = [consuming(device("whole", size="whole"), "gpu", memory="40Gi")]
        partitions += [
            consuming(device(f"slice-{i}", size="slice"), "gpu", memory="10Gi") for i in range(4)
        ]
        objects.append(make_slice(f"{node}-gpus", driver, partitions, node=node, slice_count=2))
    sizes = ["slice"] * 6 + ["whole"] * 2
    for i, size in enumerate(sizes):
        wanted = f'device.attributes["{driver}"].size == "{size}"'
        objects.append(make_claim(f"gpu-{i}").request("gpu", "gpu", selectors=(wanted,)).dict())
        objects.append(with_claims(make_pod(f"pod-{i}").dict(), claims={"gpu": f"gpu-{i}"}))
    result = await run(objects)
    memory = Counter[str]()
    for allocated in result.resource_claims:
        for _, node, name in allocated_devices_of(allocated) if allocated.get("status") else ():
            memory[node] += 40 if name == "whole" else 10
    # The six slices come first and are spread over both GPUs, so neither has 40Gi left.
    assert result.count("Scheduled") == 6
    assert sum(memory.values()) == 60 and max(memory.values()) <= 40
    pending = {p.name: p.message for p in result.pods if p.status != "Scheduled"}
    assert sorted(pending) == ["pod-6", "pod-7"]
    assert all(
        m.startswith("0/2 nodes are available: 2 cannot allocate all claims.")
        for m in pending.values()
    )


async def test_pods_share_a_nic_while_its_bandwidth_lasts() -> None:
    """One node with a 10G NIC any number of claims may share; three pods each ask for 4G.
    Two shares fit, the third would pass 10G, and each share records what it consumed."""
    driver = "net.example.com"
    nic = device("nic-0")
    nic["allowMultipleAllocations"] = True
    nic["capacity"] = {"bandwidth": {"value": "10G"}}
    objects: list[dict[str, Any]] = [
        make_node("worker").capacity(**NODE_SHAPE).dict(),
        make_device_class("nic", f'device.driver == "{driver}"'),
        make_slice("worker-nics", driver, [nic], node="worker"),
    ]
    for i in range(3):
        claim = make_claim(f"net-{i}").request("net", "nic").dict()
        claim["spec"]["devices"]["requests"][0]["exactly"]["capacity"] = {
            "requests": {"bandwidth": "4G"}
        }
        objects.append(claim)
        objects.append(with_claims(make_pod(f"pod-{i}").dict(), claims={"net": f"net-{i}"}))
    result = await run(objects)
    assert result.count("Scheduled") == 2
    shares = [
        r
        for claim in result.resource_claims
        if (claim.get("status") or {}).get("allocation")
        for r in claim["status"]["allocation"]["devices"]["results"]
    ]
    assert len(shares) == 2 and len({r["shareID"] for r in shares}) == 2
    assert [parse_quantity(r["consumedCapacity"]["bandwidth"]) for r in shares] == [4 * 10**9] * 2
    [pending] = [p for p in result.pods if p.status != "Scheduled"]
    assert pending.message.startswith("0/1 nodes are available: 1 cannot allocate all claims.")


async def test_pods_asking_for_an_extended_resource_get_devices_or_the_device_plugin() -> None:
    """Two nodes publish two GPUs each as devices; a third offers one through a device plugin.
    Six pods ask for `example.com/gpu: 1`: five fit, none shares a device."""
    driver = "gpu.example.com"
    gpu = "example.com/gpu"
    objects: list[dict[str, Any]] = [
        make_device_class("gpu", f'device.driver == "{driver}"', extended_resource_name=gpu),
        make_node("plugin").capacity(**NODE_SHAPE, **{gpu: "1"}).dict(),
    ]
    for node in ("dra-a", "dra-b"):
        objects.append(make_node(node).capacity(**NODE_SHAPE).dict())
        objects.append(make_slice(f"{node}-gpus", driver, [device("g0"), device("g1")], node=node))
    objects += [
        make_pod(f"p{i}").uid(f"p{i}-uid").req(cpu="10m", **{gpu: 1}).dict() for i in range(6)
    ]
    result = await run(objects)
    placed = {p.name: p.node for p in result.pods if p.node}
    assert Counter(placed.values()) == {"dra-a": 2, "dra-b": 2, "plugin": 1}
    [pending] = [p for p in result.pods if not p.node]
    assert pending.message == (
        "0/3 nodes are available: 1 Insufficient example.com/gpu, 2 cannot allocate all claims. "
        "still not schedulable, preemption: 0/3 nodes are available: 1 No preemption victims "
        "found for incoming pod, 2 Preemption is not helpful for scheduling."
    )
    # One claim per pod placed by devices, owned by it, allocated on its node.
    by_name = {p["metadata"]["name"]: p for p in result.raw_pods}
    claims = result.resource_claims
    assert len(claims) == 4
    assert len({d for c in claims for d in allocated_devices_of(c)}) == 4
    for claim in claims:
        [owner] = claim["metadata"]["ownerReferences"]
        pod = by_name[owner["name"]]
        assert {d[1] for d in allocated_devices_of(claim)} == {pod["spec"]["nodeName"]}
        status = pod["status"]["extendedResourceClaimStatus"]
        assert status["resourceClaimName"] == claim["metadata"]["name"]
    assert "extendedResourceClaimStatus" not in by_name[
        next(n for n, node in placed.items() if node == "plugin")
    ].get("status", {})
