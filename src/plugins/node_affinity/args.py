"""NodeAffinityArgs: node affinity the profile adds to every pod.

`addedAffinity` is a v1.NodeAffinity, decoded as strictly as upstream decodes it (unknown
fields and values of the wrong type fail with their path) and then checked as upstream's
component-helpers parse it: every requirement's key, operator and values, all problems
reported at once with their paths. Terms with no requirements, and preferred terms of weight 0,
are not checked, as upstream skips them.
"""

from __future__ import annotations

from typing import Any
from typing import Self

from pydantic import Field
from pydantic import field_serializer
from pydantic import model_validator

from scheduler.framework import ArgsModel
from scheduler.framework import Int32
from scheduler.framework import PluginArgs
from scheduler.framework.field_errors import FieldErrors
from scheduler.framework.field_errors import Loc
from scheduler.objects.labels import Requirement
from scheduler.objects.names import label_value_problems
from scheduler.objects.names import qualified_name_problems
from scheduler.objects.node_selector import NodeAffinity
from scheduler.objects.node_selector import NodeSelector
from scheduler.objects.node_selector import NodeSelectorTerm
from scheduler.objects.node_selector import PreferredTerm

_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"
_LABEL_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
_FIELD_OPERATORS = ("In", "NotIn")


class NodeSelectorRequirement(ArgsModel):
    key: str = ""
    operator: str = ""
    values: tuple[str, ...] = ()

    @property
    def shown_values(self) -> list[str] | None:
        """The values as an error shows them: null when none were given, as Go's nil."""
        return list(self.values) if "values" in self.model_fields_set else None


class NodeSelectorTermArgs(ArgsModel):
    match_expressions: tuple[NodeSelectorRequirement, ...] = ()
    match_fields: tuple[NodeSelectorRequirement, ...] = ()

    @property
    def is_empty(self) -> bool:
        return not self.match_expressions and not self.match_fields


class NodeSelectorArgs(ArgsModel):
    node_selector_terms: tuple[NodeSelectorTermArgs, ...] = ()


class PreferredSchedulingTerm(ArgsModel):
    weight: Int32 = 0
    preference: NodeSelectorTermArgs = Field(default_factory=NodeSelectorTermArgs)


class AddedAffinity(ArgsModel):
    required_during_scheduling_ignored_during_execution: NodeSelectorArgs | None = None
    preferred_during_scheduling_ignored_during_execution: tuple[PreferredSchedulingTerm, ...] = ()


class NodeAffinityArgs(PluginArgs):
    """`addedAffinity` is ANDed with every pod's own node affinity in this profile."""

    added_affinity: AddedAffinity | None = Field(default=None, alias="addedAffinity")

    @model_validator(mode="after")
    def _validate(self) -> Self:
        added = self.added_affinity
        if added is None:
            return self
        errors = FieldErrors()
        required = added.required_during_scheduling_ignored_during_execution
        if required is not None:
            for i, term in enumerate(required.node_selector_terms):
                if not term.is_empty:
                    _check_term(term, ("addedAffinity", _REQUIRED, "nodeSelectorTerms", i), errors)
        for i, preferred in enumerate(added.preferred_during_scheduling_ignored_during_execution):
            if preferred.weight != 0 and not preferred.preference.is_empty:
                # Upstream's path leaves out `preference`.
                _check_term(preferred.preference, ("addedAffinity", _PREFERRED, i), errors)
        errors.raise_if_any(type(self).__name__)
        return self

    @field_serializer("added_affinity")
    def _as_given(self, added: AddedAffinity | None) -> dict[str, Any] | None:
        # Written back as it was given, without the defaults of fields left out.
        if added is None:
            return None
        return added.model_dump(mode="json", by_alias=True, exclude_unset=True)

    def node_affinity(self) -> NodeAffinity | None:
        """The added affinity as the plugin matches it (None when it adds nothing)."""
        added = self.added_affinity
        if added is None:
            return None
        required_args = added.required_during_scheduling_ignored_during_execution
        required = None
        if required_args is not None:
            required = NodeSelector(
                tuple(_term(t) for t in required_args.node_selector_terms if not t.is_empty)
            )
        preferred = tuple(
            PreferredTerm(p.weight, _term(p.preference))
            for p in added.preferred_during_scheduling_ignored_during_execution
            if p.weight != 0 and not p.preference.is_empty
        )
        if required is None and not preferred:
            return None
        return NodeAffinity(required, preferred)


def _check_term(term: NodeSelectorTermArgs, loc: Loc, errors: FieldErrors) -> None:
    for j, requirement in enumerate(term.match_expressions):
        _check_label_requirement(requirement, (*loc, "matchExpressions", j), errors)
    for j, requirement in enumerate(term.match_fields):
        _check_field_requirement(requirement, (*loc, "matchFields", j), errors)


def _check_label_requirement(
    requirement: NodeSelectorRequirement, loc: Loc, errors: FieldErrors
) -> None:
    """As apimachinery's labels.NewRequirement checks one (after the operator is known)."""
    operator, key = requirement.operator, requirement.key
    if operator not in _LABEL_OPERATORS:
        errors.not_supported((*loc, "operator"), operator, _LABEL_OPERATORS)
        return
    problems = qualified_name_problems(key)
    if problems:
        errors.invalid((*loc, "key"), key, "; ".join(problems))
    given, shown = requirement.values, requirement.shown_values
    if operator in ("In", "NotIn") and not given:
        errors.invalid(
            (*loc, "values"), shown, "for 'in', 'notin' operators, values set can't be empty"
        )
    elif operator in ("Exists", "DoesNotExist") and given:
        errors.invalid(
            (*loc, "values"), shown, "values set must be empty for exists and does not exist"
        )
    elif operator in ("Gt", "Lt"):
        if len(given) != 1:
            errors.invalid(
                (*loc, "values"), shown, "for 'Gt', 'Lt' operators, exactly one value is required"
            )
        for i, value in enumerate(given):
            if not _is_int64(value):
                errors.invalid(
                    (*loc, "values", i),
                    value,
                    "for 'Gt', 'Lt' operators, the value must be an integer",
                )
    for i, value in enumerate(given):
        problems = label_value_problems(value)
        if problems:
            # Upstream's path names the key after the index: values[0][zone].
            errors.invalid((*loc, "values", i, f"[{key}]"), value, "; ".join(problems))


def _check_field_requirement(
    requirement: NodeSelectorRequirement, loc: Loc, errors: FieldErrors
) -> None:
    """Fields take In or NotIn with exactly one value; any key passes (only metadata.name
    is ever set on a node, so another key matches no node with In, every node with NotIn)."""
    if requirement.operator not in _FIELD_OPERATORS:
        errors.not_supported((*loc, "operator"), requirement.operator, _FIELD_OPERATORS)
    elif len(requirement.values) != 1:
        errors.invalid((*loc, "values"), requirement.shown_values, "must have one element")


def _is_int64(value: str) -> bool:
    # Go's strconv.ParseInt(value, 10, 64): an optional sign and decimal digits only.
    digits = value[1:] if value[:1] in ("+", "-") else value
    return digits.isascii() and digits.isdigit() and -(2**63) <= int(value) < 2**63


def _term(term: NodeSelectorTermArgs) -> NodeSelectorTerm:
    return NodeSelectorTerm(
        tuple(_requirement(r) for r in term.match_expressions),
        tuple(_requirement(r) for r in term.match_fields),
    )


def _requirement(requirement: NodeSelectorRequirement) -> Requirement:
    return Requirement(requirement.key, requirement.operator, frozenset(requirement.values))
