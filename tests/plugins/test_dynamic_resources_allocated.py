"""Which devices are taken, kept in step with the claims from the lister's change log: only
claims changed since the last look are read, and a log that no longer reaches back is met by
reading every claim again."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from plugins.dynamic_resources.allocated_devices import AllocatedDevices
from scheduler.framework.change_log import ChangeLog
from scheduler.testing.dra_builders import make_claim
from scheduler.testing.plugin_harness import DictLister

DRIVER = "gpu.example.com"


def allocated(name: str, device: str) -> dict[str, Any]:
    return (
        make_claim(name).request("gpu", "gpu").allocated("n1", ("gpu", DRIVER, "n1", device)).dict()
    )


def test_added_changed_and_deleted_claims_are_followed() -> None:
    claims = DictLister([allocated("a", "g0")])
    devices = AllocatedDevices(lambda: claims)
    devices.sync()
    assert devices.is_taken((DRIVER, "n1", "g0"))
    claims.add(allocated("b", "g1"))
    claims.add(allocated("a", "g2"))  # a moved from g0 to g2
    devices.sync()
    taken = {d for d in ("g0", "g1", "g2") if devices.is_taken((DRIVER, "n1", d))}
    assert taken == {"g1", "g2"}
    claims.remove("default", "b")
    devices.sync()
    assert not devices.is_taken((DRIVER, "n1", "g1"))
    assert devices.is_taken((DRIVER, "n1", "g2"))


def test_a_log_that_started_over_is_met_by_reading_every_claim() -> None:
    claims = DictLister([allocated("a", "g0")])
    claims._changes = ChangeLog(limit=2)  # so the log starts over after two more changes
    devices = AllocatedDevices(lambda: claims)
    devices.sync()
    claims.remove("default", "a")
    claims.add(allocated("b", "g1"))
    claims.add(allocated("c", "g2"))
    assert claims.changed_since(0) is None
    devices.sync()
    taken = {d for d in ("g0", "g1", "g2") if devices.is_taken((DRIVER, "n1", d))}
    assert taken == {"g1", "g2"}


def at_version(claim: dict[str, Any], version: int, uid: str = "uid-a") -> dict[str, Any]:
    claim["metadata"]["resourceVersion"] = str(version)
    claim["metadata"]["uid"] = uid
    return claim


def unallocated(version: int, uid: str = "uid-a") -> dict[str, Any]:
    return at_version(make_claim("a").request("gpu", "gpu").dict(), version, uid)


def stored_in_flight(claims: DictLister) -> AllocatedDevices:
    """Reserve allocated g0 to claim a, and PreBind stored it by a write based on version 5."""
    devices = AllocatedDevices(lambda: claims)
    devices.sync()
    devices.signal_pending("uid-a", allocated("a", "g0")["status"]["allocation"])
    devices.mark_written("uid-a", ("default", "a"), "5")
    return devices


def test_a_stored_allocation_stays_taken_while_the_informer_is_behind_it() -> None:
    claims = DictLister([unallocated(3)])
    devices = stored_in_flight(claims)
    claims.add(unallocated(5))  # the version the write was based on, not the write itself
    devices.sync()
    assert devices.is_taken((DRIVER, "n1", "g0"))
    assert devices.has_pending_allocation("uid-a")


@pytest.mark.parametrize(
    "after",
    [
        pytest.param(lambda claims: claims.add(unallocated(7)), id="freed"),
        pytest.param(lambda claims: claims.remove("default", "a"), id="deleted"),
        pytest.param(lambda claims: claims.add(unallocated(2, uid="uid-b")), id="made-again"),
    ],
)
def test_a_stored_allocation_goes_with_any_later_claim_even_one_never_seen_allocated(
    after: Callable[[DictLister], None],
) -> None:
    # The write (version 6) and what followed it reach the informer before anything looks.
    claims = DictLister([unallocated(3)])
    devices = stored_in_flight(claims)
    after(claims)
    devices.sync()
    assert not devices.is_taken((DRIVER, "n1", "g0"))
    assert not devices.has_pending_allocation("uid-a")


def test_a_stored_allocation_the_informer_already_shows_goes_at_once() -> None:
    claims = DictLister([unallocated(3)])
    devices = AllocatedDevices(lambda: claims)
    devices.sync()
    devices.signal_pending("uid-a", allocated("a", "g0")["status"]["allocation"])
    claims.add(unallocated(8))  # the write and a deallocation, seen before PreBind returned
    devices.sync()
    devices.mark_written("uid-a", ("default", "a"), "5")
    assert not devices.has_pending_allocation("uid-a")
