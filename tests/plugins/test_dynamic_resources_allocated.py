"""Which devices are taken, kept in step with the claims from the lister's change log: only
claims changed since the last look are read, and a log that no longer reaches back is met by
reading every claim again."""

from __future__ import annotations

from typing import Any

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
