"""Base of every plugin's arguments model."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel


class PluginArgs(BaseModel):
    """Arguments of a plugin, read from `pluginConfig[].args`.

    Fields are snake_case in Python and camelCase in YAML; unknown fields are rejected so a typo
    fails start-up with its field path instead of being silently ignored.
    """

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        frozen=True,
    )

    # Config files may carry the args' type meta; it is checked by the config loader.
    api_version: str | None = Field(default=None, alias="apiVersion", exclude=True)
    kind: str | None = Field(default=None, exclude=True)
