"""Device taints (DRADeviceTaints, beta and on in v1.36): a device whose ResourceSlice entry
carries a `NoSchedule` or `NoExecute` taint is given only to a request that tolerates it.

A driver taints a device it finds unhealthy, or one being drained for maintenance; a request
opts in with `tolerations` on its `exactly` body or on a `firstAvailable` alternative. Taints
of any other effect (`None`, or one this release does not know) never keep a device from a
request, as upstream reads them.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping
from typing import Any
from typing import Final

_BLOCKING: Final = frozenset({"NoSchedule", "NoExecute"})
# Where a taint a DeviceTaintRule gave a device (`taint_rules`) keeps the rule's name: in the
# scheduler's copy of the device only, under a key no API field can have.
RULE_NAME_KEY: Final = "kube-pyscheduler/device-taint-rule"

Toleration = tuple[str, str, str, str]
"""(key, operator, value, effect), as written; "" where unset."""


def read_tolerations(raw: Iterable[Any] | None) -> tuple[Toleration, ...]:
    return tuple(
        (
            str(t.get("key") or ""),
            str(t.get("operator") or ""),
            str(t.get("value") or ""),
            str(t.get("effect") or ""),
        )
        for t in raw or ()
        if isinstance(t, Mapping)
    )


def taint_blocks(device: Mapping[str, Any], tolerations: tuple[Toleration, ...]) -> bool:
    """Whether one of the device's taints keeps it from a request with these tolerations."""
    return blocking_taint(device, tolerations) is not None


def blocking_taint(
    device: Mapping[str, Any], tolerations: tuple[Toleration, ...]
) -> Mapping[str, Any] | None:
    """The first of the device's taints that keeps it from a request with these tolerations."""
    for taint in device.get("taints") or ():
        if not isinstance(taint, Mapping) or taint.get("effect") not in _BLOCKING:
            continue
        if not any(_tolerates(toleration, taint) for toleration in tolerations):
            return taint
    return None


def describe_taint(taint: Mapping[str, Any]) -> str:
    """`key=value:Effect` as kubectl writes a node's taint, and the DeviceTaintRule that put it
    on the device, if one did."""
    value = taint.get("value")
    text = f"{taint.get('key')}{f'={value}' if value else ''}:{taint.get('effect')}"
    rule = taint.get(RULE_NAME_KEY)
    return f"{text}, from DeviceTaintRule {rule}" if rule else text


def _tolerates(toleration: Toleration, taint: Mapping[str, Any]) -> bool:
    key, operator, value, effect = toleration
    if effect and effect != taint.get("effect"):
        return False
    if key and key != (taint.get("key") or ""):
        return False
    if operator in ("", "Equal"):
        return value == (taint.get("value") or "")
    return operator == "Exists"
