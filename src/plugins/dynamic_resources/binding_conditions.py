"""Device binding conditions (DRADeviceBindingConditions, beta and on in v1.36): a device that
must be prepared before a pod may use it (attached over a fabric, say) lists the conditions
its driver will set in the claim's `status.devices` once it is ready, and those that say it
failed.

The allocation repeats both lists for each such device. PreBind then waits, reading the claim
every few seconds, until every binding condition is True (bind), one failure condition is True
(fail), or the binding timeout has passed since the allocation (fail). A failed or timed-out
claim is not available on any node: the next attempt's PostFilter frees it, so other devices
can be tried.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from datetime import datetime
from datetime import timedelta
from typing import Any

from plugins.dynamic_resources import messages
from scheduler.framework.clock import Clock
from scheduler.objects.raw import RawObject

# How often PreBind reads the claims again while it waits (upstream's poll interval).
POLL_SECONDS = 5.0
TIMEOUT_PREFIX = "device binding timeout"
FAILED_PREFIX = "device binding failed"


class BindingFailedError(Exception):
    """A failure condition of a device is True."""


def _results(claim: RawObject) -> Sequence[Mapping[str, Any]]:
    allocation = (claim.get("status") or {}).get("allocation") or {}
    found: Sequence[Mapping[str, Any]] = (allocation.get("devices") or {}).get("results") or ()
    return found


def waits_for_binding(allocation: Mapping[str, Any] | None) -> bool:
    """Whether an allocation has a device with binding conditions."""
    results = ((allocation or {}).get("devices") or {}).get("results") or ()
    return any(r.get("bindingConditions") for r in results)


def _device_conditions(
    claim: RawObject, result: Mapping[str, Any]
) -> dict[str, Mapping[str, Any]] | None:
    """The conditions the driver reported for one allocated device, or None if none yet."""
    for device in (claim.get("status") or {}).get("devices") or ():
        if all(device.get(k) == result.get(k) for k in ("driver", "pool", "device")):
            return {str(c.get("type")): c for c in device.get("conditions") or ()}
    return None


def claim_ready(claim: RawObject) -> bool:
    """Whether every binding condition of the claim's devices is True; BindingFailedError if a
    failure condition is."""
    name = (claim.get("metadata") or {}).get("name")
    if not (claim.get("status") or {}).get("allocation"):
        # Not allocated, or the informer has not yet seen the allocation PreBind wrote: its
        # devices cannot have been reported ready (upstream's answer too).
        return False
    for result in _results(claim):
        wanted = result.get("bindingConditions") or ()
        if not wanted:
            continue
        conditions = _device_conditions(claim, result)
        if conditions is None:
            return False
        for failure in result.get("bindingFailureConditions") or ():
            condition = conditions.get(str(failure))
            if condition is not None and condition.get("status") == "True":
                raise BindingFailedError(
                    f"{FAILED_PREFIX}: claim={name}, reason={condition.get('reason') or ''}, "
                    f"message={_quoted(str(condition.get('message') or ''))}"
                )
        if not all((conditions.get(str(c)) or {}).get("status") == "True" for c in wanted):
            return False
    return True


def claim_timed_out(claim: RawObject, now: datetime, timeout: float) -> bool:
    """Whether a claim with binding conditions was allocated longer than `timeout` ago."""
    allocation = (claim.get("status") or {}).get("allocation") or {}
    stamp = allocation.get("allocationTimestamp")
    if not stamp or not any(r.get("bindingConditions") is not None for r in _results(claim)):
        return False
    try:
        allocated = datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
    except ValueError:
        return False
    return allocated + timedelta(seconds=timeout) < now


async def wait_until_bound(
    current_claims: Callable[[], Sequence[tuple[str, str, RawObject | None]]],
    clock: Clock,
    limit: float,
) -> tuple[str, str | None]:
    """Read the claims now and every POLL_SECONDS until all are ready, one failed or timed out,
    or `limit` seconds have passed; `current_claims` gives each claim's namespace, name and
    object (None once it is gone). Returns the outcome as kube-scheduler labels it in its
    metrics ("success", "failure", "timeout", "error") and the error text, if any."""
    deadline = clock.now() + limit
    while True:
        try:
            ready = True
            for namespace, name, claim in current_claims():
                if claim is None:
                    return "error", messages.claim_not_found(namespace, name)
                if not claim_ready(claim):
                    if claim_timed_out(claim, clock.wall(), limit):
                        return "timeout", f"{TIMEOUT_PREFIX}: claim={name}"
                    # The rest are read at the next poll, as upstream stops at the first
                    # claim not ready: a later one's failure does not end this wait yet.
                    ready = False
                    break
        except BindingFailedError as failed:
            return "failure", str(failed)
        if ready:
            return "success", None
        remaining = deadline - clock.now()
        if remaining <= POLL_SECONDS:
            await clock.sleep(max(remaining, 0.0))
            return "timeout", f"{TIMEOUT_PREFIX}: context deadline exceeded"
        await clock.sleep(POLL_SECONDS)


def _quoted(text: str) -> str:
    """Go's %q for the printable text a condition message holds."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped.replace(chr(9), chr(92) + "t")}"'
