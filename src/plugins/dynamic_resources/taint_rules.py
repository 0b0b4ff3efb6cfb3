"""DeviceTaintRules (DRADeviceTaintRules, beta and off in v1.36; `resource.k8s.io/v1beta2`):
an administrator taints devices without the driver, e.g. to take a faulty GPU out of service.
The scheduler sees every slice as if each rule selecting some of its devices had written its
taint on them too, after their own, and then reads taints as usual (`device_taints`).

A rule selects by driver, pool and device name, each optional. As upstream's slice tracker
applies them, a rule without a `deviceSelector` selects every device (the API's comment says
none; the code the scheduler runs is what pods meet).
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from plugins.dynamic_resources.device_taints import RULE_NAME_KEY
from scheduler.objects.raw import RawObject

_Selector = tuple[str | None, str | None, str | None]
"""(driver, pool, device) of a rule's deviceSelector; None where it does not narrow."""


def with_rule_taints(slices: Sequence[RawObject], rules: Sequence[RawObject]) -> list[RawObject]:
    """`slices` with every rule's taint added to the devices it selects. A slice no rule
    touches is the same object, so readers that track objects see no change in it."""
    read = [(_selector(rule), _taint(rule)) for rule in rules]
    return [_patched(slice_, read) for slice_ in slices]


def _selector(rule: RawObject) -> _Selector:
    raw = (rule.get("spec") or {}).get("deviceSelector")
    if not isinstance(raw, Mapping):
        return (None, None, None)
    return (raw.get("driver"), raw.get("pool"), raw.get("device"))


def _taint(rule: RawObject) -> dict[str, Any]:
    raw = (rule.get("spec") or {}).get("taint") or {}
    taint = {key: raw[key] for key in ("key", "value", "effect", "timeAdded") if raw.get(key)}
    # For `explain`, which names the rule behind a taint that keeps a device from a request.
    taint[RULE_NAME_KEY] = (rule.get("metadata") or {}).get("name") or ""
    return taint


def _patched(slice_: RawObject, rules: list[tuple[_Selector, dict[str, Any]]]) -> RawObject:
    spec = slice_.get("spec") or {}
    driver = spec.get("driver")
    pool = (spec.get("pool") or {}).get("name")
    applying = [
        (device_name, taint)
        for (rule_driver, rule_pool, device_name), taint in rules
        if rule_driver in (None, driver) and rule_pool in (None, pool)
    ]
    if not applying:
        return slice_
    devices = list(spec.get("devices") or ())
    changed = False
    for index, device in enumerate(devices):
        added = [taint for name, taint in applying if name in (None, device.get("name"))]
        if added:
            devices[index] = {**device, "taints": [*(device.get("taints") or ()), *added]}
            changed = True
    if not changed:
        return slice_
    return {**slice_, "spec": {**spec, "devices": devices}}
