"""Dynamic resource allocation shapes for the differential cases: a DeviceClass, ResourceSlices
of one driver on some of the nodes, devices already taken by claims of other workloads, and a
ResourceClaim the pending pod asks for.

Drawn from a random stream of their own, so adding them left every other part of a seed's cases
as it was. Device taints, and the tolerations of the pending claim's requests, come from a
second stream of their own, for the same reason. So do the choice of partitioning a node's
GPUs (each published whole and as two halves, all drawing on the GPU's memory counter) and
the halves other workloads hold, and a GPU that claims share by memory, the shares others
hold and the memory the pending claim asks for. So does a DeviceTaintRule (both schedulers run
with DRADeviceTaintRules on): its selector always names a pool, which is the run's own, so a
rule of the other scheduler's run of the case can never reach this run's devices.

The claim always exists: a pod naming a missing claim is held back before any scheduling
attempt (PreEnqueue), with no FailedScheduling text to compare.
"""

from __future__ import annotations

import random
import uuid
from typing import Any

from scheduler.testing.dra_builders import ClaimBuilder
from scheduler.testing.dra_builders import consuming
from scheduler.testing.dra_builders import device
from scheduler.testing.dra_builders import make_counter_slice
from scheduler.testing.dra_builders import make_device_class
from scheduler.testing.dra_builders import make_device_taint_rule
from scheduler.testing.dra_builders import make_slice

Object = dict[str, Any]

DRIVER = "gpu.example.com"
DEVICE_CLASS = "gpu"
# The pending pod's claim, and its name for it in the pod spec.
POD_CLAIM = "devices"
POD_CLAIM_REFERENCE = "dev"
MODELS = ("a100", "t4")
TAINT_KEY = f"{DRIVER}/unhealthy"
SHARED_DEVICE = "gpu-shared"
# What the class may provide as an extended resource: the name some nodes offer through a
# device plugin (cases.GPU), or the class's implicit name.
EXTENDED_RESOURCE = "example.com/gpu"
IMPLICIT_PREFIX = "deviceclass.resource.kubernetes.io/"
SHARED_MEMORY = "40Gi"
SHARED_POLICY = {"default": "10Gi", "validRange": {"min": "10Gi", "step": "10Gi"}}
GPU_MEMORY = "40Gi"
HALF_MEMORY = "20Gi"
# None and unknown effects never keep a device from a request; the other two always do,
# unless tolerated.
TAINT_EFFECTS = ("NoSchedule", "NoExecute", "None")
# Claims allocated by kube-scheduler v1.36 carry the time of their allocation; it refuses to
# share one that lacks it (docs/architecture.md, where we part ways with it on purpose).
ALLOCATED_AT = "2026-01-01T09:00:00Z"
# How many consumers one claim may be reserved for (ResourceClaimReservedForMaxSize).
MAX_CONSUMERS = 256
SHAPES = ("none",) * 8 + (
    "count",
    "count",
    "selector",
    "all",
    "missing-class",
    "pinned",
    "same-model",
    "first-available",
    "two-claims",
    "in-use",
)
# What a plain pending pod drops of the generated one, so that its claim decides where it goes.
_DROPPED_FIELDS = (
    "affinity",
    "nodeSelector",
    "topologySpreadConstraints",
    "volumes",
    "resources",
    "initContainers",
)


def with_devices(seed: int, index: int, pending: Object, node_names: list[str]) -> list[Object]:
    """The device objects of case `index` (none for most cases), with `pending` made to ask
    for its claim when there are any."""
    rng = random.Random(f"{seed}/{index}/devices")
    taints = random.Random(f"{seed}/{index}/device-taints")
    partitions = random.Random(f"{seed}/{index}/device-partitions")
    sharing = random.Random(f"{seed}/{index}/device-sharing")
    rules = random.Random(f"{seed}/{index}/device-taint-rules")
    shape = rng.choice(SHAPES)
    if shape == "none":
        return []
    objects: list[Object] = [make_device_class(DEVICE_CLASS, f'device.driver == "{DRIVER}"')]
    inventory: dict[str, list[str]] = {}
    # Claims of other workloads on the partitions and shared devices, from their own streams.
    held: list[Object] = []
    for node in node_names:
        if rng.random() < 0.3:
            continue
        names = [f"gpu-{i}" for i in range(rng.randint(0, 3))]
        if not names:
            continue
        devices = [device(name, model=rng.choice(MODELS), index=i) for i, name in enumerate(names)]
        for entry in devices:
            if taints.random() < 0.25:
                value = taints.choice(("ecc", "thermal"))
                effect = taints.choice(TAINT_EFFECTS)
                entry["taints"] = [{"key": TAINT_KEY, "value": value, "effect": effect}]
        slices = 1
        if partitions.random() < 0.3:
            devices = _partitioned(devices)
            objects.append(_counters(node, names))
            slices = 2
            held += _halves_taken(partitions, node, names)
        if sharing.random() < 0.25:
            devices.append(_shared_device(sharing.choice(MODELS)))
            held += _shares_held(sharing, node)
        inventory[node] = names
        objects.append(
            make_slice(f"{node}-gpu", DRIVER, devices, node=node, pool=node, slice_count=slices)
        )
    objects += _taken(rng, inventory)
    objects += held
    if inventory and rules.random() < 0.3:
        objects.append(_taint_rule(rules, inventory))
    claims = [_pending_claim(rng, shape, inventory, node_names)]
    _tolerate(taints, claims[0])
    _ask_capacity(sharing, claims[0])
    if shape == "two-claims":
        claims.append(_bare(ClaimBuilder(f"{POD_CLAIM}-2").request("gpu", DEVICE_CLASS).dict()))
    objects += claims
    spec = pending["spec"]
    if rng.random() < 0.5:
        _make_plain(spec)
    asks_by_resource = random.Random(f"{seed}/{index}/device-extended")
    if asks_by_resource.random() < 0.35:
        if asks_by_resource.random() < 0.6:
            _make_plain(spec)  # more pods that fit somewhere: their PreBind makes the claim
        _ask_by_resource(asks_by_resource, objects[0], spec)
        if asks_by_resource.random() < 0.5:
            return objects  # devices through the extended resource alone; the claims unused
    # The pod's names for its claims: "dev" for "devices", "dev-2" for "devices-2".
    references = [
        POD_CLAIM_REFERENCE + claim["metadata"]["name"].removeprefix(POD_CLAIM) for claim in claims
    ]
    spec["resourceClaims"] = [
        {"name": reference, "resourceClaimName": claim["metadata"]["name"]}
        for reference, claim in zip(references, claims, strict=True)
    ]
    spec["containers"][0].setdefault("resources", {})["claims"] = [
        {"name": reference} for reference in references
    ]
    return objects


def _partitioned(gpus: list[Object]) -> list[Object]:
    """Each GPU whole and as two halves with its attributes and taints, drawing on its memory."""
    devices: list[Object] = []
    for gpu in gpus:
        devices.append(consuming(gpu, gpu["name"], memory=GPU_MEMORY))
        for half in range(2):
            part = {**gpu, "name": f"{gpu['name']}-half-{half}"}
            devices.append(consuming(part, gpu["name"], memory=HALF_MEMORY))
    return devices


def _halves_taken(rng: random.Random, node: str, names: list[str]) -> list[Object]:
    """Claims of other workloads, each holding one half of a partitioned GPU."""
    claims: list[Object] = []
    for name in names:
        for half in range(2):
            if rng.random() < 0.2:
                device_name = f"{name}-half-{half}"
                claim = ClaimBuilder(f"taken-{node}-{device_name}").request("gpu", DEVICE_CLASS)
                claims.append(
                    _bare(claim.allocated(node, ("gpu", DRIVER, node, device_name)).dict())
                )
    return claims


def _shared_device(model: str) -> Object:
    """A GPU any number of claims may share, its memory handed out in steps of 10Gi."""
    shared = device(SHARED_DEVICE, model=model, index=9)
    shared["allowMultipleAllocations"] = True
    shared["capacity"] = {"memory": {"value": SHARED_MEMORY, "requestPolicy": SHARED_POLICY}}
    return shared


def _shares_held(rng: random.Random, node: str) -> list[Object]:
    """Claims of other workloads, each holding one share of the node's shared GPU."""
    claims: list[Object] = []
    for share in range(rng.randint(0, 3)):
        claim = ClaimBuilder(f"share-{node}-{share}").request("gpu", DEVICE_CLASS)
        raw = _bare(claim.allocated(node, ("gpu", DRIVER, node, SHARED_DEVICE)).dict())
        [result] = raw["status"]["allocation"]["devices"]["results"]
        result["shareID"] = str(uuid.UUID(int=rng.getrandbits(128), version=4))
        result["consumedCapacity"] = {"memory": rng.choice(("10Gi", "20Gi"))}
        claims.append(raw)
    return claims


def _ask_capacity(rng: random.Random, claim: Object) -> None:
    """Sometimes, an amount of memory on the claim's `exactly` requests: only a shared GPU has
    memory to give, in steps of 10Gi (so 15Gi takes 20Gi)."""
    if rng.random() < 0.7:
        return
    amount = rng.choice(("5Gi", "15Gi", "30Gi"))
    for request in claim["spec"]["devices"]["requests"]:
        if "exactly" in request:
            request["exactly"]["capacity"] = {"requests": {"memory": amount}}


def _counters(node: str, names: list[str]) -> Object:
    memory = {name: {"memory": GPU_MEMORY} for name in names}
    return make_counter_slice(f"{node}-gpu-counters", DRIVER, node, memory, node=node)


def _taken(rng: random.Random, inventory: dict[str, list[str]]) -> list[Object]:
    """Claims of other workloads, each holding one device (allocated, reserved for nobody)."""
    claims: list[Object] = []
    for node, names in inventory.items():
        for name in names:
            if rng.random() < 0.3:
                claim = ClaimBuilder(f"taken-{node}-{name}").request("gpu", DEVICE_CLASS)
                claims.append(_bare(claim.allocated(node, ("gpu", DRIVER, node, name)).dict()))
    return claims


def _pending_claim(
    rng: random.Random, shape: str, inventory: dict[str, list[str]], node_names: list[str]
) -> Object:
    claim = ClaimBuilder(POD_CLAIM)
    if shape == "count":
        claim.request("gpu", DEVICE_CLASS, count=rng.choice((1, 1, 2)))
    elif shape == "selector":
        model = rng.choice(MODELS)
        expression = f'device.attributes["{DRIVER}"].model == "{model}"'
        claim.request("gpu", DEVICE_CLASS, selectors=(expression,))
    elif shape == "all":
        claim.request("gpu", DEVICE_CLASS, all_devices=True)
    elif shape == "missing-class":
        claim.request("gpu", "no-such-class")
    elif shape == "same-model":
        # Two devices of one model on one node.
        claim.request("first", DEVICE_CLASS).request("second", DEVICE_CLASS)
        claim.match_attribute(f"{DRIVER}/model")
    elif shape == "first-available":
        small = f'device.attributes["{DRIVER}"].model == "t4"'
        claim.first_available("gpu", ("pair", DEVICE_CLASS, 2), ("small", DEVICE_CLASS, 1))
        claim.dict()["spec"]["devices"]["requests"][0]["firstAvailable"][1]["selectors"] = [
            {"cel": {"expression": small}}
        ]
    else:
        # Allocated already, on one node: the pod can only go there. "in-use": and reserved for
        # as many other consumers as a claim may have.
        node = rng.choice(sorted(inventory) or node_names)
        name = rng.choice(inventory.get(node) or ["gpu-0"])
        claim.request("gpu", DEVICE_CLASS).allocated(node, ("gpu", DRIVER, node, name))
        if shape == "in-use":
            claim.dict()["status"]["reservedFor"] = [
                {"resource": "pods", "name": f"holder-{i}", "uid": f"holder-uid-{i}"}
                for i in range(MAX_CONSUMERS)
            ]
    return _bare(claim.dict())


def _taint_rule(rng: random.Random, inventory: dict[str, list[str]]) -> Object:
    """A DeviceTaintRule over one node's pool, all of it or one of its devices, sometimes
    naming the driver too; its taint of the key the claim may tolerate, or of another."""
    pool = rng.choice(sorted(inventory))
    device_name = rng.choice([None, *inventory[pool]])
    driver = rng.choice((None, DRIVER))
    key = rng.choice((TAINT_KEY, TAINT_KEY, "example.com/maintenance"))
    taint = {
        "key": key,
        "value": rng.choice(("ecc", "thermal")),
        "effect": rng.choice(TAINT_EFFECTS),
    }
    return make_device_taint_rule("gpus-out", taint, driver=driver, pool=pool, device=device_name)


def _tolerate(rng: random.Random, claim: Object) -> None:
    """Sometimes, tolerations on the claim's `exactly` requests: of any taint of the key, of
    one value only, or of one effect only."""
    if rng.random() < 0.5:
        return
    toleration = rng.choice(
        (
            {"key": TAINT_KEY, "operator": "Exists"},
            {"key": TAINT_KEY, "operator": "Equal", "value": "ecc"},
            {"key": TAINT_KEY, "operator": "Exists", "effect": "NoSchedule"},
        )
    )
    for request in claim["spec"]["devices"]["requests"]:
        if "exactly" in request:
            request["exactly"]["tolerations"] = [dict(toleration)]


def _ask_by_resource(rng: random.Random, device_class: Object, spec: Object) -> None:
    """The pod asks for GPUs as an extended resource the class provides: by the name the class
    gives (`example.com/gpu`, which some nodes offer through a device plugin) or by the class's
    implicit name. Sometimes an init container asks for one more than the main container."""
    if rng.random() < 0.6:
        device_class["spec"]["extendedResourceName"] = EXTENDED_RESOURCE
        name = EXTENDED_RESOURCE
    else:
        name = IMPLICIT_PREFIX + DEVICE_CLASS
    count = rng.choice((1, 1, 2))
    _ask(spec["containers"][0], name, count)
    if rng.random() < 0.3:
        init = {"name": "prepare", "image": "registry.example/prepare"}
        _ask(init, name, count + 1)
        spec.setdefault("initContainers", []).append(init)


def _ask(container: Object, name: str, count: int) -> None:
    # Requests of an extended resource must equal its limits.
    resources = container.setdefault("resources", {})
    resources.setdefault("requests", {})[name] = str(count)
    resources.setdefault("limits", {})[name] = str(count)


def _make_plain(spec: Object) -> None:
    """Small requests and no placement rules of its own: whether the pod fits turns on its
    claim (and on taints, ports and cordons)."""
    for key in _DROPPED_FIELDS:
        spec.pop(key, None)
    container = spec["containers"][0]
    container["resources"] = {"requests": {"cpu": "100m", "memory": "128Mi"}}


def _bare(claim: Object) -> Object:
    """A claim as it is created (the server gives the uid and resourceVersion), its allocation,
    if any, stamped."""
    for key in ("uid", "resourceVersion", "namespace"):
        claim["metadata"].pop(key, None)
    allocation = (claim.get("status") or {}).get("allocation")
    if allocation is not None:
        allocation["allocationTimestamp"] = ALLOCATED_AT
    return claim


def asks_by_resource(devices: list[Object], pending: Object) -> bool:
    """Whether the pending pod asks for devices as an extended resource a class provides."""
    provided = {
        obj["spec"].get("extendedResourceName") for obj in devices if obj["kind"] == "DeviceClass"
    }
    spec = pending["spec"]
    return any(
        name in provided or name.startswith(IMPLICIT_PREFIX)
        for container in [*(spec.get("initContainers") or ()), *spec["containers"]]
        for name in ((container.get("resources") or {}).get("requests") or {})
    )
