"""The Kubernetes CEL library for device selectors on top of celpy: the `quantity` and
`semver` types with their functions and methods, and the conversion of a ResourceSlice device
into the `device` variable (`driver`, `attributes[domain][name]`, `capacity[domain][name]`)."""

from __future__ import annotations

import re
from collections.abc import Callable
from collections.abc import Mapping
from fractions import Fraction
from functools import total_ordering
from typing import Any

from celpy import celtypes

from scheduler.objects.quantity import QuantityError
from scheduler.objects.quantity import parse_quantity

_SEMVER = re.compile(
    r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
    r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
    r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?",
    re.ASCII,
)


class CELValueError(ValueError):
    """A helper got an argument it cannot use (an invalid quantity or version string)."""


@total_ordering
class Quantity:
    """A Kubernetes resource quantity inside CEL; compared by value, not by spelling."""

    __slots__ = ("value",)

    def __init__(self, value: Fraction) -> None:
        self.value = value

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Quantity) and self.value == other.value

    def __lt__(self, other: Quantity) -> bool:
        return self.value < other.value

    def __hash__(self) -> int:
        return hash(self.value)


@total_ordering
class Semver:
    """A semantic version (major.minor.patch[-pre][+build]); build metadata never counts."""

    __slots__ = ("major", "minor", "patch", "pre")

    def __init__(self, major: int, minor: int, patch: int, pre: tuple[str, ...]) -> None:
        self.major, self.minor, self.patch, self.pre = major, minor, patch, pre

    def _key(self) -> tuple[Any, ...]:
        # A version without a pre-release sorts after the same version with one.
        pre = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in self.pre)
        return (self.major, self.minor, self.patch, not self.pre, pre)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Semver) and self._key() == other._key()

    def __lt__(self, other: Semver) -> bool:
        return self._key() < other._key()

    def __hash__(self) -> int:
        return hash(self._key())


def parse_semver(text: str) -> Semver:
    match = _SEMVER.fullmatch(text)
    if match is None:
        raise CELValueError(f"invalid semver: {text}")
    pre = tuple(match.group(4).split(".")) if match.group(4) else ()
    return Semver(int(match.group(1)), int(match.group(2)), int(match.group(3)), pre)


def _quantity(text: Any) -> Quantity:
    try:
        return Quantity(parse_quantity(str(text)))
    except QuantityError as exc:
        raise CELValueError(f"invalid quantity: {text}") from exc


def _is_quantity(text: Any) -> celtypes.BoolType:
    try:
        parse_quantity(str(text))
    except QuantityError:
        return celtypes.BoolType(False)
    return celtypes.BoolType(True)


def _is_semver(text: Any) -> celtypes.BoolType:
    return celtypes.BoolType(_SEMVER.fullmatch(str(text)) is not None)


def _compare(left: Any, right: Any) -> celtypes.IntType:
    if type(left) is not type(right) or not isinstance(left, Quantity | Semver):
        raise CELValueError("compareTo needs two quantities or two semvers")
    return celtypes.IntType((left > right) - (left < right))


def _as_number(value: Any) -> Fraction:
    if isinstance(value, Quantity):
        return value.value
    if isinstance(value, int):
        return Fraction(value)
    raise CELValueError("quantity arithmetic needs a quantity or an int")


def _quantity_only(value: Any) -> Quantity:
    if not isinstance(value, Quantity):
        raise CELValueError("expected a quantity")
    return value


def _semver_only(value: Any) -> Semver:
    if not isinstance(value, Semver):
        raise CELValueError("expected a semver")
    return value


def _sign(value: Fraction) -> int:
    return (value > 0) - (value < 0)


def _as_integer(value: Any) -> celtypes.IntType:
    number = _quantity_only(value).value
    if number.denominator != 1:
        raise CELValueError("cannot convert value to integer")
    return celtypes.IntType(number.numerator)


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "quantity": _quantity,
    "isQuantity": _is_quantity,
    "semver": lambda text: parse_semver(str(text)),
    "isSemver": _is_semver,
    "compareTo": _compare,
    "isLessThan": lambda a, b: celtypes.BoolType(_compare(a, b) < 0),
    "isGreaterThan": lambda a, b: celtypes.BoolType(_compare(a, b) > 0),
    "add": lambda a, b: Quantity(_as_number(a) + _as_number(b)),
    "sub": lambda a, b: Quantity(_as_number(a) - _as_number(b)),
    "sign": lambda a: celtypes.IntType(
        (_quantity_only(a).value > 0) - (_quantity_only(a).value < 0)
    ),
    "isInteger": lambda a: celtypes.BoolType(_quantity_only(a).value.denominator == 1),
    "asInteger": _as_integer,
    "asApproximateFloat": lambda a: celtypes.DoubleType(float(_quantity_only(a).value)),
    "major": lambda v: celtypes.IntType(_semver_only(v).major),
    "minor": lambda v: celtypes.IntType(_semver_only(v).minor),
    "patch": lambda v: celtypes.IntType(_semver_only(v).patch),
}


def _attribute_value(raw: Mapping[str, Any]) -> Any:
    if "bool" in raw:
        return celtypes.BoolType(bool(raw["bool"]))
    if "int" in raw:
        return celtypes.IntType(int(raw["int"]))
    if "string" in raw:
        return celtypes.StringType(str(raw["string"]))
    if "version" in raw:
        return parse_semver(str(raw["version"]))
    raise CELValueError("attribute has no value")


def qualified(driver: str, name: str) -> tuple[str, str]:
    """(domain, name) of an attribute or capacity key; an unqualified key is the driver's."""
    domain, slash, short = name.rpartition("/")
    return (domain, short) if slash else (driver, name)


def device_variable(driver: str, device: Mapping[str, Any]) -> celtypes.MapType:
    """The `device` variable a selector sees for one ResourceSlice device."""
    attributes: dict[str, dict[Any, Any]] = {}
    for key, raw in (device.get("attributes") or {}).items():
        domain, name = qualified(driver, key)
        attributes.setdefault(domain, {})[celtypes.StringType(name)] = _attribute_value(raw)
    capacity: dict[str, dict[Any, Any]] = {}
    for key, raw in (device.get("capacity") or {}).items():
        domain, name = qualified(driver, key)
        capacity.setdefault(domain, {})[celtypes.StringType(name)] = _quantity(raw.get("value"))
    return celtypes.MapType(
        {
            celtypes.StringType("driver"): celtypes.StringType(driver),
            celtypes.StringType("attributes"): _domains(attributes),
            celtypes.StringType("capacity"): _domains(capacity),
            celtypes.StringType("allowMultipleAllocations"): celtypes.BoolType(
                bool(device.get("allowMultipleAllocations"))
            ),
        }
    )


class _Domains(celtypes.MapType):
    """Attributes or capacity by domain: a domain the device has nothing in reads as an empty
    map, as in Kubernetes, so `device.attributes["other.example.com"]` alone is no error."""

    def __getitem__(self, key: Any) -> Any:
        try:
            return super().__getitem__(key)
        except KeyError:
            return celtypes.MapType({})


def _domains(by_domain: Mapping[str, Mapping[Any, Any]]) -> celtypes.MapType:
    return _Domains(
        {celtypes.StringType(d): celtypes.MapType(dict(v)) for d, v in by_domain.items()}
    )
