"""DataLocalityArgs: how much a node near the data, but not at it, is worth."""

from __future__ import annotations

from pydantic import Field
from pydantic import model_validator

from scheduler.framework import PluginArgs


class DataLocalityArgs(PluginArgs):
    # Share of a datum's weight a node earns when it is in the datum's zone but is not the
    # datum's host, and when it is only in the datum's region. A node at the datum's own
    # level (its host, its zone, its region) earns the whole weight.
    zone_credit: float = Field(0.5, ge=0.0, le=1.0)
    region_credit: float = Field(0.2, ge=0.0, le=1.0)

    @model_validator(mode="after")
    def _nearer_earns_more(self) -> DataLocalityArgs:
        if self.region_credit > self.zone_credit:
            raise ValueError(
                f"regionCredit ({self.region_credit:g}) must not exceed zoneCredit "
                f"({self.zone_credit:g}): a node in the data's zone is nearer than one in its "
                "region"
            )
        return self
