"""Field paths and problem lines, worded like Kubernetes' field validation errors.

Every problem found in a configuration becomes one `FieldError`; the loader collects them all
and raises a single ConfigError whose message has one "<field.path>: <what is wrong>" line each.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel
from pydantic import ValidationError

from scheduler.framework.errors import ConfigError

_PLAIN_KEY = re.compile(r"[A-Za-z0-9_./-]+")
_MAP_KEY = re.compile(r"\[[A-Za-z0-9_./-]*\]")
# What pydantic puts after a mapping key that is itself invalid; not a key of ours.
_PYDANTIC_KEY = "[key]"


@dataclass(frozen=True, slots=True)
class FieldPath:
    """A path such as `profiles[1].pluginConfig[0].args`."""

    parts: tuple[str | int, ...] = ()

    def child(self, *names: str | int) -> FieldPath:
        return FieldPath((*self.parts, *names))

    def index(self, position: int) -> FieldPath:
        return FieldPath((*self.parts, position))

    def __str__(self) -> str:
        text = ""
        for part in self.parts:
            if isinstance(part, int):
                text += f"[{part}]"
            elif _MAP_KEY.fullmatch(part) and part != _PYDANTIC_KEY:
                # A map key as Go's field paths write one (`values[0][zone]`), given bracketed.
                text += part
            elif _PLAIN_KEY.fullmatch(part):
                text += f".{part}" if text else part
            else:
                # A key with spaces, dots, brackets or invisible characters (a stray byte-order
                # mark, say) is quoted, so the path stays readable and unambiguous.
                text += f"[{json.dumps(part)}]"
        return text


ROOT = FieldPath()


@dataclass(frozen=True, slots=True)
class FieldError:
    path: FieldPath
    detail: str

    def __str__(self) -> str:
        path = str(self.path)
        return f"{path}: {self.detail}" if path else self.detail


def render(value: Any) -> str:
    """A value as it appears inside a message: JSON, so strings are double-quoted."""
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json", by_alias=True)
    return json.dumps(value, sort_keys=True, default=str)


def invalid(path: FieldPath, value: Any, detail: str) -> FieldError:
    return FieldError(path, f"Invalid value: {render(value)}: {detail}")


def required(path: FieldPath, detail: str = "") -> FieldError:
    return FieldError(path, f"Required value: {detail}" if detail else "Required value")


def duplicate(path: FieldPath, value: Any) -> FieldError:
    return FieldError(path, f"Duplicate value: {render(value)}")


def not_found(path: FieldPath, detail: str) -> FieldError:
    return FieldError(path, f"Not found: {detail}")


def unsupported(path: FieldPath, value: Any, supported: Sequence[str]) -> FieldError:
    choices = ", ".join(render(choice) for choice in supported)
    return FieldError(path, f"Unsupported value: {render(value)}: supported values: {choices}")


def unknown_field(path: FieldPath) -> FieldError:
    # Worded as upstream's strict decoder words it, which puts the path inside the message.
    return FieldError(ROOT, f'strict decoding error: unknown field "{path}"')


def from_validation_error(base: FieldPath, error: ValidationError) -> list[FieldError]:
    """Translate pydantic's error locations (which use the camelCase aliases) into field paths."""
    problems = []
    for item in error.errors(include_url=False):
        path = base
        for part in item["loc"]:
            path = path.child(part)
        if item["type"] == "extra_forbidden":
            problems.append(unknown_field(path))
        elif item["type"] == "value_error":
            # The validator's own words, without pydantic's "Value error, " in front.
            problems.append(FieldError(path, str(item["ctx"]["error"])))
        else:
            problems.append(FieldError(path, item["msg"]))
    return problems


def raise_if_any(problems: Iterable[FieldError]) -> None:
    lines = [str(problem) for problem in problems]
    if lines:
        raise ConfigError("\n".join(lines))
