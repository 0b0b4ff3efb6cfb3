"""The decoding rules every object read from a configuration file shares.

Upstream decodes its configuration strictly into Go structs, and these rules give a pydantic
model the same behaviour: camelCase in files and snake_case in Python, unknown fields rejected
(a typo fails with its field path rather than being ignored), no coercion between types (a
quoted number is not a number), and no change once built.
"""

from __future__ import annotations

from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic.alias_generators import to_camel


class StrictModel(BaseModel):
    # Declared on a base class rather than shared as a value, so that mypy's pydantic plugin
    # sees `frozen` and `extra` in every model that derives from it.
    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        frozen=True,
        strict=True,
    )
