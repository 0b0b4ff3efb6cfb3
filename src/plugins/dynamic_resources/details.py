"""Why DynamicResources turned a node down, claim by claim and device by device, for `explain`:
"cannot allocate all claims" is all the Event may say (it is upstream's text, and counted), but
an operator needs to know which device was taken, tainted or out of counters.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence

from plugins.dynamic_resources.allocator import Candidates
from plugins.dynamic_resources.allocator import Refusal
from plugins.dynamic_resources.device_taints import blocking_taint
from plugins.dynamic_resources.device_taints import describe_taint
from plugins.dynamic_resources.inventory import Device
from plugins.dynamic_resources.inventory import Inventory
from plugins.dynamic_resources.requests import ALL
from plugins.dynamic_resources.requests import Alternative
from plugins.dynamic_resources.requests import ClaimPlan
from plugins.dynamic_resources.state import StateData
from scheduler.framework import Node

# Devices named per request before the rest are only counted.
NAMED_DEVICES = 8

RefusalOf = Callable[[Alternative], Callable[[Device], Refusal | None]]


def node_details(
    data: StateData,
    plans: Sequence[ClaimPlan],
    inventory: Inventory,
    node: Node,
    candidates: Candidates,
    refusal_of: RefusalOf,
) -> list[str]:
    lines: list[str] = []
    for index in sorted(data.unbindable):
        lines.append(
            f"claim {_key(data, index)}: its devices failed to bind, or did not within the "
            "binding timeout; it must be freed before it can be allocated again"
        )
    for index, where in sorted(data.available_on.items()):
        if not where.matches(node.labels, node.name):
            lines.append(f"claim {_key(data, index)} is allocated, for other nodes than this one")
    for (driver, pool), reason in inventory.unusable_pools_for(node):
        lines.append(f"resource pool {driver}/{pool} is {reason}: nothing is given from it")
    extended = data.extended
    if extended is not None and extended.stale:
        meta = extended.claim["metadata"]
        lines.append(
            f"claim {meta.get('namespace')}/{meta.get('name')} was made for the pod's extended "
            "resources by an earlier attempt that did not bind it; it is deleted, and the pod "
            "tried again with a new one"
        )
    for plan in plans:
        for request in plan.requests:
            for alternative in request.alternatives:
                lines.append(_request_line(plan, alternative, candidates, refusal_of))
    return lines


def _key(data: StateData, index: int) -> str:
    claim = data.claims[index]
    return f"{claim.namespace}/{claim.name}"


def _request_line(
    plan: ClaimPlan, alternative: Alternative, candidates: Candidates, refusal_of: RefusalOf
) -> str:
    wanted = "all devices" if alternative.mode == ALL else f"{alternative.count} device(s)"
    head = f"claim {plan.key}, request {alternative.result_name} ({wanted})"
    searched = candidates(alternative)
    failure = searched.first_failure()
    if failure is not None:
        # Which device the search reaches first decides whether the pod meets the error, so
        # the error is named with how many devices it spares.
        head += (
            f": {failure} (on {len(searched.failures)} of {len(searched.devices)} devices "
            "that may match; the search stops at the first of them no claim holds)"
        )
    found = searched.matching
    if not found:
        return f"{head}: no device here matches class {alternative.class_name} and its selectors"
    refusal = refusal_of(alternative)
    said: list[str] = []
    free: list[Device] = []
    for device in found:
        why = refusal(device)
        if why is None:
            free.append(device)
        if len(said) < NAMED_DEVICES:
            said.append(f"{device.pool}/{device.name} {_why(why, device, alternative)}")
    more = f", and {len(found) - NAMED_DEVICES} more" if len(found) > NAMED_DEVICES else ""
    summary = f"{len(found)} matching, {len(free)} free on its own"
    shared = _shared_counters(free)
    if shared:
        summary += (
            f", but those draw on the same counters ({', '.join(shared)}), so they may not "
            "all be given at once"
        )
    if plan.constraints:
        summary += ", and the claim's constraints must hold among those chosen"
    return f"{head}: {summary}: " + "; ".join(said) + more


def _shared_counters(devices: Sequence[Device]) -> list[str]:
    """`set/counter` of each counter two or more of the devices draw on: devices free one by
    one (overlapping partitions of one GPU, say) that together may want more than it holds."""
    users: dict[tuple[str, str, str], int] = {}
    for device in devices:
        for counter in {counter for counter, _ in device.consumes}:
            key = (device.pool, *counter)
            users[key] = users.get(key, 0) + 1
    return [f"{counter_set}/{name}" for (_, counter_set, name), n in sorted(users.items()) if n > 1]


def _why(refusal: Refusal | None, device: Device, alternative: Alternative) -> str:
    if refusal is None:
        return "free"
    taint = blocking_taint(device.raw, alternative.tolerations)
    if refusal is Refusal.TAINTED and taint is not None:
        return f"{refusal} ({describe_taint(taint)})"
    return str(refusal)
