"""GPUAwareArgs: pack or spread GPU pods by what the DCGM exporter reports."""

from __future__ import annotations

from enum import StrEnum
from typing import Self

from pydantic import BaseModel
from pydantic import ConfigDict
from pydantic import Field
from pydantic import model_validator
from pydantic.alias_generators import to_camel

from plugins.helpers.prometheus import PrometheusSourceArgs
from scheduler.framework import PluginArgs

# dcgm-exporter writes one series per GPU, labelled with the node's name in `Hostname`.
GPU_UTILIZATION = "avg by (Hostname) (DCGM_FI_DEV_GPU_UTIL)"
FREE_MEMORY_PERCENT = (
    "100 * sum by (Hostname) (DCGM_FI_DEV_FB_FREE) / (sum by (Hostname) "
    "(DCGM_FI_DEV_FB_FREE) + sum by (Hostname) (DCGM_FI_DEV_FB_USED))"
)


class Strategy(StrEnum):
    SPREAD = "Spread"  # the least busy GPUs, the most free GPU memory
    PACK = "Pack"  # the busiest GPUs that still fit, keeping other nodes' GPUs whole


class GPUQueries(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True
    )

    gpu_utilization: str = Field(GPU_UTILIZATION, min_length=1)
    free_memory_percent: str = Field(FREE_MEMORY_PERCENT, min_length=1)


class GPUPrometheusSourceArgs(PrometheusSourceArgs):
    node_label: str = Field("Hostname", min_length=1)


class GPUAwareArgs(PluginArgs):
    # Files carry the name as a string; strict args would want an enum instance.
    strategy: Strategy = Field(default=Strategy.SPREAD, strict=False)
    # A pod is a GPU pod when it requests any of these.
    gpu_resources: tuple[str, ...] = Field(("nvidia.com/gpu",), min_length=1)
    utilization_weight: int = Field(1, ge=0, le=100)
    free_memory_weight: int = Field(1, ge=0, le=100)
    prometheus: GPUPrometheusSourceArgs = GPUPrometheusSourceArgs()
    queries: GPUQueries = GPUQueries()

    @model_validator(mode="after")
    def _some_weight(self) -> Self:
        if self.utilization_weight + self.free_memory_weight == 0:
            raise ValueError("utilizationWeight and freeMemoryWeight cannot both be 0")
        return self
