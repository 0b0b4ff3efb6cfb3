"""PodTopologySpreadArgs (kubescheduler.config.k8s.io/v1) with upstream defaults and validation.

Every problem is reported with its path inside the args (e.g. `defaultConstraints[0].maxSkew`)
in the wording of Kubernetes field errors, all at once.
"""

from __future__ import annotations

from typing import Any
from typing import Final
from typing import Self

from pydantic import field_validator
from pydantic import model_validator

from plugins.pod_topology_spread.constraints import DO_NOT_SCHEDULE
from plugins.pod_topology_spread.constraints import SCHEDULE_ANYWAY
from scheduler.framework import ArgsModel
from scheduler.framework import FieldErrors
from scheduler.framework import Int32
from scheduler.framework import PluginArgs
from scheduler.framework.field_errors import Loc
from scheduler.objects.names import qualified_name_problems

SYSTEM_DEFAULTING: Final = "System"
LIST_DEFAULTING: Final = "List"
DEFAULTING_TYPES: Final = (SYSTEM_DEFAULTING, LIST_DEFAULTING)
ACTIONS: Final = (DO_NOT_SCHEDULE, SCHEDULE_ANYWAY)


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
        errors = FieldErrors()
        kind = self.defaulting_type
        if kind not in DEFAULTING_TYPES:
            errors.not_supported(("defaultingType",), kind, DEFAULTING_TYPES)
        elif kind == SYSTEM_DEFAULTING and self.default_constraints:
            errors.invalid(("defaultingType",), kind, "when .defaultConstraints are not empty")
        for index, constraint in enumerate(self.default_constraints):
            _validate_constraint(index, constraint, self.default_constraints, errors)
        errors.raise_if_any(type(self).__name__)
        return self


def _validate_constraint(
    index: int,
    constraint: DefaultConstraint,
    all_constraints: tuple[DefaultConstraint, ...],
    errors: FieldErrors,
) -> None:
    loc: Loc = ("defaultConstraints", index)
    if constraint.max_skew <= 0:
        errors.invalid((*loc, "maxSkew"), constraint.max_skew, "not in valid range (0, inf)")
    key = constraint.topology_key
    if not key:
        errors.required((*loc, "topologyKey"), "can not be empty")
    for problem in qualified_name_problems(key) if key else ():
        errors.invalid((*loc, "topologyKey"), key, problem)
    action = constraint.when_unsatisfiable
    if not action:
        errors.required((*loc, "whenUnsatisfiable"), "can not be empty")
    elif action not in ACTIONS:
        errors.not_supported((*loc, "whenUnsatisfiable"), action, ACTIONS)
    if constraint.label_selector is not None:
        errors.forbidden(
            (*loc, "labelSelector"),
            constraint.label_selector,
            "constraint must not define a selector, as they deduced for each pod",
        )
    for earlier in all_constraints[:index]:
        if (earlier.topology_key, earlier.when_unsatisfiable) == (key, action):
            errors.duplicate(loc, f"{{{key}, {action}}}")
            break
