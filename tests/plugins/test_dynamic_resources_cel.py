"""The CEL library for device selectors: Kubernetes' helpers on celpy, its limits, and errors
reported, never raised."""

from __future__ import annotations

import pytest

from plugins.dynamic_resources.cel_selectors import MAX_EXPRESSION_LENGTH
from plugins.dynamic_resources.cel_selectors import SelectorCompiler
from plugins.dynamic_resources.cel_values import device_variable
from plugins.dynamic_resources.selector_error import SelectorError
from scheduler.testing.dra_builders import device

GPU = device(
    "gpu-0",
    capacity={"memory": "80Gi"},
    model="a100",
    cores=108,
    healthy=True,
    driverVersion="v1.2.3",
    **{"pci.example.com/root": "pci-0"},
)
VARIABLE = device_variable("gpu.example.com", GPU)


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ('device.driver == "gpu.example.com"', True),
        ('device.attributes["gpu.example.com"].model == "a100"', True),
        ('device.attributes["gpu.example.com"].cores > 100', True),
        ('device.attributes["gpu.example.com"].healthy', True),
        ('device.attributes["pci.example.com"].root == "pci-0"', True),
        ('"model" in device.attributes["gpu.example.com"]', True),
        ('device.attributes["other.example.com"].size() == 0', True),
        ('device.capacity["gpu.example.com"].memory.compareTo(quantity("80Gi")) == 0', True),
        ('device.capacity["gpu.example.com"].memory.isLessThan(quantity("100Gi"))', True),
        ('device.capacity["gpu.example.com"].memory == quantity("81920Mi")', True),
        ('device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("1.2.0"))', True),
        ('device.attributes["gpu.example.com"].driverVersion.major() == 1', True),
        ('semver("1.0.0-rc.1").isLessThan(semver("1.0.0"))', True),
        ('isSemver("1.2") || isQuantity("1Zz")', False),
        # The whole string must be a version: a trailing newline is not one.
        ('isSemver("1.2.3\\n")', False),
    ],
)
def test_selector_library(expression: str, expected: bool) -> None:
    assert SelectorCompiler().compile(expression).matches(VARIABLE) is expected


@pytest.mark.parametrize(
    ("expression", "error"),
    [
        ('device.attributes["gpu.example.com"].missing', "CEL runtime error: no such key: missing"),
        (
            'device.attributes["gpu.example.com"].model',
            "CEL result type error: must evaluate to bool, got StringType",
        ),
        (
            'quantity("not a quantity").isInteger()',
            "CEL runtime error: invalid quantity: not a quantity",
        ),
    ],
)
def test_runtime_errors_are_reported(expression: str, error: str) -> None:
    selector = SelectorCompiler().compile(expression)
    with pytest.raises(SelectorError) as caught:
        selector.matches(VARIABLE)
    assert str(caught.value) == error


def test_compile_errors_are_remembered_not_reparsed() -> None:
    compiler = SelectorCompiler()
    with pytest.raises(SelectorError, match=r"^CEL compile error: "):
        compiler.compile("device.driver ==")
    first = compiler._cache["device.driver =="]
    with pytest.raises(SelectorError):
        compiler.compile("device.driver ==")
    assert compiler._cache["device.driver =="] is first
    assert compiler.compile("true") is compiler.compile("true")


def test_length_and_cost_limits() -> None:
    compiler = SelectorCompiler()
    with pytest.raises(SelectorError, match="expression too long"):
        compiler.compile("true || " * (MAX_EXPRESSION_LENGTH // 8) + "true")
    nested = "device.attributes.all(a, " * 4 + "true" + ")" * 4
    with pytest.raises(SelectorError, match="estimated cost exceeds the limit"):
        compiler.compile(nested)
    compiler.compile('device.attributes["gpu.example.com"].all(a, a != "x")')
