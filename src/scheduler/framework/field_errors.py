"""Collect every args problem with its field path, then fail once, as upstream's validation does.

Each error carries a `loc` relative to the args object (e.g. ("scoringStrategy", "type")), so a
configuration loader that validates the args inside a profile reports the full path, e.g.
`profiles[0].pluginConfig[1].args.scoringStrategy.type`. Messages use the wording of
Kubernetes' field errors ("Invalid value", "Unsupported value", ...).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from pydantic import ValidationError
from pydantic_core import InitErrorDetails
from pydantic_core import PydanticCustomError

Loc = tuple[str | int, ...]


def _shown(value: Any) -> str:
    """A value as Go's field errors print it: scalars as they are (strings quoted), anything
    else as compact JSON (`null`, `[]`, `["a","b"]`), or Python's text if it has none."""
    if isinstance(value, str | int | float | bool):
        return json.dumps(value)
    try:
        return json.dumps(value, separators=(",", ":"))
    except TypeError:
        return repr(value)


class FieldErrors:
    def __init__(self) -> None:
        self._errors: list[InitErrorDetails] = []

    def __bool__(self) -> bool:
        return bool(self._errors)

    def _add(self, kind: str, loc: Loc, value: Any, message: str) -> None:
        # Without a context, pydantic leaves the template as it is (braces included).
        error = PydanticCustomError(kind, message)
        self._errors.append(InitErrorDetails(type=error, loc=loc, input=value))

    def invalid(self, loc: Loc, value: Any, detail: str) -> None:
        self._add("field_invalid", loc, value, f"Invalid value: {_shown(value)}: {detail}")

    def not_supported(self, loc: Loc, value: Any, supported: Iterable[str]) -> None:
        choices = ", ".join(json.dumps(s) for s in supported)
        self._add(
            "field_not_supported",
            loc,
            value,
            f"Unsupported value: {_shown(value)}: supported values: {choices}",
        )

    def required(self, loc: Loc, detail: str) -> None:
        self._add("field_required", loc, None, f"Required value: {detail}")

    def forbidden(self, loc: Loc, value: Any, detail: str) -> None:
        self._add("field_forbidden", loc, value, f"Forbidden: {detail}")

    def duplicate(self, loc: Loc, value: Any) -> None:
        self._add("field_duplicate", loc, value, f"Duplicate value: {_shown(value)}")

    def raise_if_any(self, title: str) -> None:
        if self._errors:
            raise ValidationError.from_exception_data(title, self._errors)
