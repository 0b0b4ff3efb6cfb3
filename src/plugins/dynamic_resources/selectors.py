"""Which devices a request may get: its DeviceClass's selectors, then the request's own, all
CEL. A device's answer depends only on its driver, attributes and capacity, so answers are kept
per (expression, device signature): identical devices cost one evaluation.

The CEL library is imported when the first selector is compiled, not with the plugin: most
clusters have no device claims, and it is a twentieth of the daemon's start-up."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING
from typing import Any

from plugins.dynamic_resources.inventory import Device
from plugins.dynamic_resources.selector_error import SelectorError
from scheduler.objects.raw import RawObject

if TYPE_CHECKING:
    from plugins.dynamic_resources.cel_selectors import SelectorCompiler


class AllocationError(Exception):
    """Something is wrong with a claim or class (e.g. a bad selector): scheduling must stop
    for the pod, not move on to another node."""


def cel_expressions(selectors: Sequence[RawObject] | None) -> tuple[str, ...]:
    return tuple(str((s.get("cel") or {}).get("expression") or "") for s in selectors or ())


@dataclass(frozen=True, slots=True)
class SelectorSet:
    """The expressions one side (class or claim) contributes, and how errors name it."""

    owner: str  # "class gpu" or "claim default/c"
    expressions: tuple[str, ...]


class DeviceMatcher:
    """Evaluates selector sets on devices, remembering answers across cycles."""

    def __init__(self, compiler: SelectorCompiler | None = None) -> None:
        self._given_compiler = compiler
        self._answers: dict[tuple[str, str], bool | SelectorError] = {}
        self._variables: dict[str, Any] = {}

    @property
    def _compiler(self) -> SelectorCompiler:
        if self._given_compiler is None:
            from plugins.dynamic_resources.cel_selectors import SelectorCompiler  # noqa: PLC0415

            self._given_compiler = SelectorCompiler()
        return self._given_compiler

    def forget_devices(self) -> None:
        """Drop remembered answers (the slices changed, so few of them will be asked again)."""
        self._answers.clear()
        self._variables.clear()

    def evaluate(self, device: Device, sets: Sequence[SelectorSet]) -> bool | AllocationError:
        """Whether the device matches every set, in order, or the error of the first selector
        that fails on it (returned, not raised: the search meets it only if it gets there)."""
        for selector_set in sets:
            for index, expression in enumerate(selector_set.expressions):
                answer = self._answer(expression, device)
                if isinstance(answer, SelectorError):
                    return AllocationError(f"{selector_set.owner}: selector #{index}: {answer}")
                if not answer:
                    return False
        return True

    def _answer(self, expression: str, device: Device) -> bool | SelectorError:
        key = (expression, device.signature)
        found = self._answers.get(key)
        if found is not None:
            return found
        try:
            selector = self._compiler.compile(expression)
            variable = self._variables.get(device.signature)
            if variable is None:
                from plugins.dynamic_resources.cel_values import device_variable  # noqa: PLC0415

                variable = device_variable(device.driver, device.raw)
                self._variables[device.signature] = variable
            answer: bool | SelectorError = selector.matches(variable)
        except SelectorError as exc:
            answer = exc
        except ValueError as exc:  # an attribute value the library cannot read
            answer = SelectorError(f"CEL runtime error: {exc}")
        self._answers[key] = answer
        return answer

    def check(self, sets: Sequence[SelectorSet]) -> None:
        """Compile every expression now, so a broken one is reported even with no devices."""
        for selector_set in sets:
            for index, expression in enumerate(selector_set.expressions):
                try:
                    self._compiler.compile(expression)
                except SelectorError as exc:
                    raise AllocationError(
                        f"{selector_set.owner}: selector #{index}: {exc}"
                    ) from exc
