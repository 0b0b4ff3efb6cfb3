"""Base of every plugin's arguments model, and the strictness all args share.

Upstream decodes plugin args into Go structs, so a value of the wrong JSON type fails and every
integer has a width. One rule here gives our models the same behaviour, whatever the plugin:

- no coercion between types: `true`, `"5"` or `"yes"` are not numbers or booleans;
- list input is accepted where a field is a tuple (files have no tuples);
- every integer fits in an int64 (Go has no wider integer); fields that are int32 upstream say
  so with `Int32`;
- floats are finite (JSON has no Inf or NaN);
- a field given as null is unset and gets its default. Upstream's optional fields are pointers
  that a null leaves nil; its other fields keep their zero value on a null, which defaulting
  then treats as unset, so either way a null reads as if the field were absent.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from collections.abc import Mapping
from types import UnionType
from typing import Annotated
from typing import Any
from typing import Final
from typing import Self
from typing import Union
from typing import get_args
from typing import get_origin

from pydantic import BaseModel
from pydantic import Field
from pydantic import ValidationInfo
from pydantic import field_validator
from pydantic import model_validator

from scheduler.framework.strict_model import StrictModel

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

# Integer fields with the Go width of the upstream field they mirror.
Int32 = Annotated[int, Field(ge=INT32_MIN, le=INT32_MAX)]
Int64 = Annotated[int, Field(ge=INT64_MIN, le=INT64_MAX)]


def drop_null_fields(model: type[BaseModel], data: Any) -> Any:
    """`data` without the known fields that are null, so that they get their defaults.

    Unknown fields stay, null or not, so that they are still refused by name; so do snake_case
    names, which files may not use (`StrictModel.from_document`).
    """
    if not isinstance(data, dict):
        return data
    known = {info.alias or name for name, info in model.model_fields.items()}
    return {key: value for key, value in data.items() if value is not None or key not in known}


def _takes_tuple(annotation: Any) -> bool:
    """Whether a field's type is a tuple, or a union with one (`tuple[...] | None`)."""
    if get_origin(annotation) is tuple:
        return True
    return get_origin(annotation) in (Union, UnionType) and any(
        get_origin(member) is tuple for member in get_args(annotation)
    )


class ArgsModel(StrictModel):
    """Plugin args and the objects nested in them: camelCase in files, unknown fields and
    values of the wrong type rejected, immutable once built."""

    @model_validator(mode="before")
    @classmethod
    def _null_means_unset(cls, data: Any) -> Any:
        return drop_null_fields(cls, data)

    @model_validator(mode="before")
    @classmethod
    def _lists_as_tuples(cls, data: Any) -> Any:
        # Strict validation takes only real tuples for tuple fields; YAML and JSON give lists.
        if not isinstance(data, dict):
            return data
        converted = dict(data)
        for name, info in cls.model_fields.items():
            if not _takes_tuple(info.annotation):
                continue
            for key in {name, info.alias or name}:
                value = converted.get(key)
                if isinstance(value, list):
                    converted[key] = tuple(value)
        return converted

    @field_validator("*", mode="after")
    @classmethod
    def _go_widths(cls, value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool):
            if not INT64_MIN <= value <= INT64_MAX:
                raise ValueError("must fit in a 64-bit integer")
        elif isinstance(value, float) and not math.isfinite(value):
            raise ValueError("must be a finite number")
        return value


GateCheck = Callable[[str], bool]
"""Whether a kube-scheduler feature gate is on, by name, for the scheduler being configured."""

# Where `PluginArgs.read` puts the gates in pydantic's validation context.
_GATES: Final = "feature_gates"


def gate_enabled(info: ValidationInfo, gate: str, *, default: bool) -> bool:
    """For a validator of plugin args: whether `gate` is on for the scheduler whose
    configuration is being read. `default`, the gate's v1.36 default, answers when the reader
    named no gates (a configuration checked on its own, as `validate-config` does)."""
    context = info.context
    check = context.get(_GATES) if isinstance(context, Mapping) else None
    return bool(check(gate)) if check is not None else default


class PluginArgs(ArgsModel):
    """Arguments of a plugin, read from `pluginConfig[].args`.

    Fields are snake_case in Python and camelCase in YAML; unknown fields are rejected so a typo
    fails start-up with its field path instead of being silently ignored. Args whose defaults or
    rules follow a feature gate, as upstream's do, read it in a validator with `gate_enabled`.
    """

    # Config files may carry the args' type meta; it is checked by the config loader.
    api_version: str | None = Field(default=None, alias="apiVersion", exclude=True)
    kind: str | None = Field(default=None, exclude=True)

    @classmethod
    def read(cls, data: Any, gates: GateCheck | None = None) -> Self:
        """The args from a decoded `pluginConfig[].args` (`{}` for the defaults), defaulted
        and checked under the feature gates `gates` tells (v1.36's defaults if None)."""
        context = {_GATES: gates} if gates is not None else None
        return cls.model_validate(data, by_alias=True, by_name=False, context=context)
