"""Where a plugin's Prometheus lives and how often, how patiently and how long to trust it."""

from __future__ import annotations

from typing import Self

from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import Field
from pydantic import model_validator
from pydantic.alias_generators import to_camel

# The Service the Prometheus Operator creates for every Prometheus it runs (kube-prometheus
# puts it in `monitoring`); set `address` for anything else.
DEFAULT_ADDRESS = "http://prometheus-operated.monitoring.svc:9090"


class PrometheusSourceArgs(BaseModel):
    """The `prometheus` block of a Prometheus-fed plugin's args."""

    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True
    )

    address: str = Field(DEFAULT_ADDRESS, pattern=r"^https?://[^\s/]+(/\S*)?$")
    interval_seconds: float = Field(15.0, gt=0, le=3600)
    timeout_seconds: float = Field(5.0, gt=0, le=300)
    retries: int = Field(2, ge=0, le=10)
    max_staleness_seconds: float = Field(60.0, gt=0)
    node_label: str = Field("instance", min_length=1)

    @model_validator(mode="after")
    def _coherent(self) -> Self:
        if self.max_staleness_seconds < self.interval_seconds:
            raise ValueError(
                f"maxStalenessSeconds ({self.max_staleness_seconds:g}) must be at least "
                f"intervalSeconds ({self.interval_seconds:g}), or every value would go stale "
                "before the next refresh"
            )
        if self.timeout_seconds > self.interval_seconds:
            raise ValueError(
                f"timeoutSeconds ({self.timeout_seconds:g}) must not exceed intervalSeconds "
                f"({self.interval_seconds:g})"
            )
        return self
