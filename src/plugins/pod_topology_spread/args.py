"""PodTopologySpreadArgs (kubescheduler.config.k8s.io/v1) with upstream defaults and validation.

Every problem is reported with its path inside the args (e.g. `defaultConstraints[0].maxSkew`)
in the wording of Kubernetes field errors, all at once.
"""

from __future__ import annotations

import json
from typing import Any, Final, Self

from pydantic import ValidationError, field_validator, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError

from plugins.pod_topology_spread.constraints import DO_NOT_SCHEDULE, SCHEDULE_ANYWAY
from plugins.pod_topology_spread.label_key import label_key_problems
from scheduler.framework import ArgsModel, Int32, PluginArgs

SYSTEM_DEFAULTING: Final = "System"
LIST_DEFAULTING: Final = "List"
DEFAULTING_TYPES: Final = (SYSTEM_DEFAULTING, LIST_DEFAULTING)
ACTIONS: Final = (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY)

Loc = tuple[str | int, ...]


class DefaultConstraint(ArgsModel):
    """A v1.TopologySpreadConstraint applied to pods that have none of their own."""

    max_skew: Int32 = 0
    topology_key: str = ""
    when_unsatisfiable: str = ""
    # Must stay unset: the selector is deduced per pod from its Services and controller.
    label_selector: dict[str, Any] | None = None
    min_domains: Int32 | None = None
    node_affinity_policy: str | None = None
    node_taints_policy: str | None = None
    match_label_keys: tuple[str, ...] = ()

    def as_api_dict(self) -> dict[str, Any]:
        """The constraint as it would appear in a pod spec."""
        return self.model_dump(by_alias=True, exclude_none=True)


class _FieldErrors:
    def __init__(self) -> None:
        self.errors: list[InitErrorDetails] = []

    def add(self, loc: Loc, value: Any, message: str) -> None:
        error = PydanticCustomError("field_error", message)
        self.errors.append(InitErrorDetails(type=error, loc=loc, input=value))


def _shown(value: Any) -> str:
    return json.dumps(value)


def _supported(values: tuple[str, ...]) -> str:
    return ", ".join(json.dumps(v) for v in values)


class PodTopologySpreadArgs(PluginArgs):
    """Arguments of PodTopologySpread, with upstream's defaults."""

    default_constraints: tuple[DefaultConstraint, ...] = ()
    defaulting_type: str = SYSTEM_DEFAULTING

    @field_validator("defaulting_type")
    @classmethod
    def _unset_is_system(cls, value: str) -> str:
        return value or SYSTEM_DEFAULTING

    @property
    def system_defaulted(self) -> bool:
        return self.defaulting_type == SYSTEM_DEFAULTING

    @model_validator(mode="after")
    def _validate(self) -> Self:
        errors = _FieldErrors()
        kind = self.defaulting_type
        if kind not in DEFAULTING_TYPES:
            errors.add(
                ("defaultingType",),
                kind,
                f"Unsupported value: {_shown(kind)}: supported values: "
                f"{_supported(DEFAULTING_TYPES)}",
            )
        elif kind == SYSTEM_DEFAULTING and self.default_constraints:
            errors.add(
                ("defaultingType",),
                kind,
                f"Invalid value: {_shown(kind)}: when .defaultConstraints are not empty",
            )
        for index, constraint in enumerate(self.default_constraints):
            _validate_constraint(index, constraint, self.default_constraints, errors)
        if errors.errors:
            raise ValidationError.from_exception_data(type(self).__name__, errors.errors)
        return self


def _validate_constraint(
    index: int,
    constraint: DefaultConstraint,
    all_constraints: tuple[DefaultConstraint, ...],
    errors: _FieldErrors,
) -> None:
    loc: Loc = ("defaultConstraints", index)
    if constraint.max_skew <= 0:
        errors.add(
            (*loc, "maxSkew"),
            constraint.max_skew,
            f"Invalid value: {constraint.max_skew}: not in valid range (0, inf)",
        )
    key = constraint.topology_key
    if not key:
        errors.add((*loc, "topologyKey"), key, "Required value: can not be empty")
    for problem in label_key_problems(key) if key else ():
        errors.add((*loc, "topologyKey"), key, f"Invalid value: {_shown(key)}: {problem}")
    action = constraint.when_unsatisfiable
    if not action:
        errors.add((*loc, "whenUnsatisfiable"), action, "Required value: can not be empty")
    elif action not in ACTIONS:
        errors.add(
            (*loc, "whenUnsatisfiable"),
            action,
            f"Unsupported value: {_shown(action)}: supported values: {_supported(ACTIONS)}",
        )
    if constraint.label_selector is not None:
        errors.add(
            (*loc, "labelSelector"),
            constraint.label_selector,
            "Forbidden: constraint must not define a selector, as they deduced for each pod",
        )
    for earlier in all_constraints[:index]:
        if (earlier.topology_key, earlier.when_unsatisfiable) == (key, action):
            errors.add(loc, key, f"Duplicate value: {_shown(f'{{{key}, {action}}}')}")
            break
