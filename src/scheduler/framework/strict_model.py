"""The decoding rules every object read from a configuration file shares.

Upstream decodes its configuration strictly into Go structs, and these rules give a pydantic
model the same behaviour: camelCase in files and snake_case in Python, unknown fields rejected
(a typo fails with its field path rather than being ignored), no coercion between types (a
quoted number is not a number), and no change once built.

Files are read with `from_document`, which knows fields by their camelCase names only, as
upstream does: `percentage_of_nodes_to_score` in a file is an unknown field. Python code builds
models by their snake_case names (`model_validate` and the constructor take both).
"""

from __future__ import annotations

from typing import Any
from typing import Self

from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic.alias_generators import to_camel


class StrictModel(BaseModel):
    # Declared on a base class rather than shared as a value, so that mypy's pydantic plugin
    # sees `frozen` and `extra` in every model that derives from it.
    model_config = ConfigDict(
        alias_generator=to_camel,
        validate_by_name=True,
        extra="forbid",
        frozen=True,
        strict=True,
    )

    @classmethod
    def from_document(cls, data: Any) -> Self:
        """The model read from a decoded file: camelCase field names only, nested models too."""
        return cls.model_validate(data, by_alias=True, by_name=False)
