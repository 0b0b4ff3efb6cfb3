"""The KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1) object model.

Field names are snake_case in Python and camelCase in files. Unknown fields are rejected and
values are not coerced between types (a quoted number is not a number), matching upstream's
strict decoding. Field defaults are upstream's; defaults that depend on other fields or on the
plugin registry (profiles, plugins, pluginConfig) are applied by `scheduler.config.defaults`.
"""

from __future__ import annotations

import base64
from typing import Annotated
from typing import Any

from pydantic import BaseModel
from pydantic import Field
from pydantic import ValidationInfo
from pydantic import field_validator
from pydantic import model_validator

from scheduler.config.durations import Duration
from scheduler.framework.args import Int32
from scheduler.framework.args import Int64
from scheduler.framework.args import drop_null_fields
from scheduler.framework.strict_model import StrictModel

API_VERSION = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"

# Go widths of the upstream fields: values outside them fail decoding upstream too.
FLOAT32_MAX = 3.4028234663852886e38
Float32 = Annotated[float, Field(allow_inf_nan=False, ge=-FLOAT32_MAX, le=FLOAT32_MAX)]

# Applied by the extender client when `httpTimeout` is zero (upstream's DefaultExtenderTimeout).
DEFAULT_EXTENDER_HTTP_TIMEOUT_SECONDS = 5.0


class ConfigModel(StrictModel):
    """An object of the configuration file: `StrictModel`'s rules, and null read as unset."""

    @model_validator(mode="before")
    @classmethod
    def _null_means_unset(cls, data: Any) -> Any:
        # `plugins:` with nothing under it is null in YAML; upstream reads null as "not set".
        return drop_null_fields(cls, data)


# Go keeps durations in whole nanoseconds: anything shorter is a zero duration there.
_NANOSECOND = 1e-9


def _default_if_zero(model: type[BaseModel], value: Any, info: ValidationInfo) -> Any:
    # Upstream defaults these fields whenever they hold Go's zero value, so a file that writes
    # `0s`, `0` or `""` gets the default as if it had left the field out.
    if value or info.field_name is None:
        return value
    return model.model_fields[info.field_name].default


class LeaderElectionConfiguration(ConfigModel):
    leader_elect: bool = True
    lease_duration: Duration = 15.0
    renew_deadline: Duration = 10.0
    retry_period: Duration = 2.0
    resource_lock: str = "leases"
    resource_name: str = "kube-scheduler"
    resource_namespace: str = "kube-system"

    @field_validator("lease_duration", "renew_deadline", "retry_period")
    @classmethod
    def _zero_duration_means_default(cls, value: float, info: ValidationInfo) -> Any:
        return _default_if_zero(cls, 0.0 if abs(value) < _NANOSECOND else value, info)

    @field_validator("resource_lock", "resource_name", "resource_namespace")
    @classmethod
    def _empty_means_default(cls, value: str, info: ValidationInfo) -> Any:
        return _default_if_zero(cls, value, info)


class ClientConnectionConfiguration(ConfigModel):
    kubeconfig: str = ""
    accept_content_types: str = ""
    content_type: str = "application/vnd.kubernetes.protobuf"
    qps: Float32 = 50.0
    burst: Int32 = 100

    @field_validator("content_type", "qps", "burst")
    @classmethod
    def _zero_means_default(cls, value: Any, info: ValidationInfo) -> Any:
        return _default_if_zero(cls, value, info)


class ExtenderManagedResource(ConfigModel):
    name: str
    ignored_by_scheduler: bool = False


def decode_base64(text: str) -> bytes:
    """Base64 as Go's JSON decoder reads a []byte: the standard alphabet, padded; line breaks
    are skipped."""
    return base64.b64decode(text.replace("\r", "").replace("\n", ""), validate=True)


class ExtenderTLSConfig(ConfigModel):
    insecure: bool = False
    server_name: str = ""
    cert_file: str = ""
    key_file: str = ""
    ca_file: str = ""
    # Base64 text in files, as Go encodes []byte.
    cert_data: str = ""
    key_data: str = ""
    ca_data: str = ""

    @field_validator("cert_data", "key_data", "ca_data")
    @classmethod
    def _base64(cls, value: str) -> str:
        # Upstream fails decoding the file on bad base64, so this is found by validate-config,
        # not when the extender client is built.
        try:
            decode_base64(value)
        except ValueError as error:
            raise ValueError(f"not valid base64: {error}") from error
        return value


class Extender(ConfigModel):
    url_prefix: str = ""
    filter_verb: str = ""
    preempt_verb: str = ""
    prioritize_verb: str = ""
    weight: Int64 = 0
    bind_verb: str = ""
    enable_https: bool = Field(default=False, alias="enableHTTPS")
    tls_config: ExtenderTLSConfig | None = None
    http_timeout: Duration = 0.0
    node_cache_capable: bool = False
    managed_resources: list[ExtenderManagedResource] = Field(default_factory=list)
    ignorable: bool = False


class Plugin(ConfigModel):
    """One entry of a plugin set; `weight` matters only for Score and None means unset."""

    name: str
    weight: Int32 | None = None


class PluginSet(ConfigModel):
    enabled: list[Plugin] = Field(default_factory=list)
    disabled: list[Plugin] = Field(default_factory=list)


class Plugins(ConfigModel):
    pre_enqueue: PluginSet = Field(default_factory=PluginSet)
    queue_sort: PluginSet = Field(default_factory=PluginSet)
    pre_filter: PluginSet = Field(default_factory=PluginSet)
    filter: PluginSet = Field(default_factory=PluginSet)
    post_filter: PluginSet = Field(default_factory=PluginSet)
    pre_score: PluginSet = Field(default_factory=PluginSet)
    score: PluginSet = Field(default_factory=PluginSet)
    reserve: PluginSet = Field(default_factory=PluginSet)
    permit: PluginSet = Field(default_factory=PluginSet)
    pre_bind: PluginSet = Field(default_factory=PluginSet)
    bind: PluginSet = Field(default_factory=PluginSet)
    post_bind: PluginSet = Field(default_factory=PluginSet)
    multi_point: PluginSet = Field(default_factory=PluginSet)
    # The pod-group placement points of v1.36's alpha TopologyAwareWorkloadScheduling. No
    # plugin here implements them, so only empty sets (or disabled lists) pass validation.
    placement_generate: PluginSet = Field(default_factory=PluginSet)
    placement_score: PluginSet = Field(default_factory=PluginSet)


class PluginConfig(ConfigModel):
    """Arguments for one plugin; `args` stays a plain mapping until the plugin's model checks it."""

    name: str
    args: dict[str, Any] | None = None


class KubeSchedulerProfile(ConfigModel):
    scheduler_name: str | None = None
    percentage_of_nodes_to_score: Int32 | None = None
    plugins: Plugins = Field(default_factory=Plugins)
    plugin_config: list[PluginConfig] = Field(default_factory=list)


class KubeSchedulerConfiguration(ConfigModel):
    api_version: str = API_VERSION
    kind: str = KIND
    parallelism: Int32 = 16
    leader_election: LeaderElectionConfiguration = Field(
        default_factory=LeaderElectionConfiguration
    )
    client_connection: ClientConnectionConfiguration = Field(
        default_factory=ClientConnectionConfiguration
    )
    # Serves /debug/flags/v and /debug/pprof/ on the secure port (scheduler.app.debug_endpoints).
    enable_profiling: bool = True
    # Go's block profile, which has no Python counterpart: accepted and without effect (see
    # docs/deploy.md). When absent it follows `enable_profiling`: upstream turns contention
    # profiling on by default only when profiling is on.
    enable_contention_profiling: bool = True
    percentage_of_nodes_to_score: Int32 = 0
    pod_initial_backoff_seconds: Int64 = 1
    pod_max_backoff_seconds: Int64 = 10
    profiles: list[KubeSchedulerProfile] = Field(default_factory=list)
    extenders: list[Extender] = Field(default_factory=list)
    delay_cache_until_active: bool = False

    @model_validator(mode="before")
    @classmethod
    def _default_contention_profiling(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        keys = ("enableContentionProfiling", "enable_contention_profiling")
        if any(data.get(key) is not None for key in keys):
            return data
        profiling = data.get("enableProfiling", data.get("enable_profiling", True))
        cleaned = {key: value for key, value in data.items() if key not in keys}
        cleaned["enableContentionProfiling"] = profiling if isinstance(profiling, bool) else True
        return cleaned
