"""LoadAwareArgs: which Trimaran strategy, its knobs, and where the load comes from."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import Field
from pydantic import field_validator
from pydantic.alias_generators import to_camel

from plugins.helpers.prometheus import PrometheusSourceArgs
from scheduler.framework import PluginArgs
from scheduler.objects.quantity import milli_value

# node_exporter, aggregated per scrape target. Utilisation is a percentage of the machine.
CPU_UTILIZATION = '100 * (1 - avg by (instance) (rate(node_cpu_seconds_total{mode="idle"}[5m])))'
CPU_STD_DEV = (
    "100 * stddev_over_time((1 - avg by (instance) "
    '(rate(node_cpu_seconds_total{mode="idle"}[1m])))[15m:1m])'
)
MEMORY_UTILIZATION = "100 * (1 - node_memory_MemAvailable_bytes / node_memory_MemTotal_bytes)"
MEMORY_STD_DEV = (
    "100 * stddev_over_time((1 - node_memory_MemAvailable_bytes / "
    "node_memory_MemTotal_bytes)[15m:1m])"
)

_CAMEL = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True)


class Mode(StrEnum):
    TARGET_LOAD_PACKING = "TargetLoadPacking"
    LOAD_VARIATION_RISK_BALANCING = "LoadVariationRiskBalancing"


class LoadQueries(BaseModel):
    """PromQL for each measure, in percent of the node, one series per node."""

    model_config = _CAMEL

    cpu_utilization: str = Field(CPU_UTILIZATION, min_length=1)
    cpu_std_dev: str = Field(CPU_STD_DEV, min_length=1)
    memory_utilization: str = Field(MEMORY_UTILIZATION, min_length=1)
    memory_std_dev: str = Field(MEMORY_STD_DEV, min_length=1)


class DefaultRequests(BaseModel):
    """What a container with neither CPU limit nor request is expected to use."""

    model_config = _CAMEL

    cpu: str = "1"

    @field_validator("cpu")
    @classmethod
    def _quantity(cls, value: str) -> str:
        try:
            millis = milli_value(value)
        except (ValueError, ArithmeticError) as exc:
            raise ValueError(f"not a CPU quantity: {value!r}") from exc
        if millis <= 0:
            raise ValueError(f"must be positive, got {value!r}")
        return value

    @property
    def cpu_millis(self) -> int:
        return milli_value(self.cpu)


class LoadAwareArgs(PluginArgs):
    # Files carry the name as a string; strict args would want an enum instance.
    mode: Mode = Field(default=Mode.TARGET_LOAD_PACKING, strict=False)
    # TargetLoadPacking
    target_utilization: int = Field(40, ge=1, le=99)
    default_requests: DefaultRequests = DefaultRequests()
    default_requests_multiplier: float = Field(1.5, ge=1.0, le=100.0)
    # LoadVariationRiskBalancing
    safe_variance_margin: float = Field(1.0, ge=0.0)
    safe_variance_sensitivity: float = Field(1.0, gt=0.0)
    # Both: pods placed this long before the newest sample of a node may not show in it yet.
    reporting_interval_seconds: float = Field(60.0, ge=0.0)
    prometheus: PrometheusSourceArgs = PrometheusSourceArgs()
    queries: LoadQueries = LoadQueries()
