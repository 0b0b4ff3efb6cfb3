"""A claim's constraints as the search adds and removes devices: `matchAttribute` (every
device the constraint covers has one value of the attribute) and `distinctAttribute` (no two
have the same value).

Both count the devices they hold, as upstream's do, so backing out of a device undoes exactly
what adding it did. The distinct form keeps one value per request name, as upstream's does:
a later device of a request replaces the value its earlier one left, and removing a device
forgets its request's value.
"""

from __future__ import annotations

from typing import Any

from plugins.dynamic_resources.inventory import Device
from plugins.dynamic_resources.requests import Alternative
from plugins.dynamic_resources.requests import Constraint


class ConstraintState:
    __slots__ = ("_constraint", "_count", "_value", "_values")

    def __init__(self, constraint: Constraint) -> None:
        self._constraint = constraint
        self._count = 0
        self._value: Any = None
        self._values: dict[str, Any] = {}

    def accepts(self, alternative: Alternative, device: Device) -> bool:
        if not self._constraint.applies_to(alternative):
            return True
        value = device.attribute(self._constraint.attribute)
        if value is None:
            return False
        if self._count == 0:
            return True
        if self._constraint.distinct:
            return value not in self._values.values()
        return bool(value == self._value)

    def add(self, alternative: Alternative, device: Device) -> None:
        """Count a device `accepts` let in."""
        if not self._constraint.applies_to(alternative):
            return
        value = device.attribute(self._constraint.attribute)
        if self._constraint.distinct:
            self._values[alternative.parent] = value
        elif self._count == 0:
            self._value = value
        self._count += 1

    def remove(self, alternative: Alternative) -> None:
        if not self._constraint.applies_to(alternative):
            return
        self._count -= 1
        if self._constraint.distinct:
            self._values.pop(alternative.parent, None)
