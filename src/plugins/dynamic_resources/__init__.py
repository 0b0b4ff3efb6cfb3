"""The DynamicResources plugin: devices for pods' ResourceClaims (resource.k8s.io/v1)."""

from plugins.dynamic_resources.args import DEFAULT_FILTER_TIMEOUT_SECONDS
from plugins.dynamic_resources.args import DynamicResourcesArgs
from plugins.dynamic_resources.names import DEVICE_CLASSES
from plugins.dynamic_resources.names import DEVICE_TAINT_RULES
from plugins.dynamic_resources.names import RESOURCE_CLAIM_TEMPLATES
from plugins.dynamic_resources.names import RESOURCE_CLAIMS
from plugins.dynamic_resources.names import RESOURCE_SLICES
from plugins.dynamic_resources.plugin import DynamicResources
from scheduler.framework import PluginSpec

SPEC = PluginSpec(
    name="DynamicResources",
    plugin_class=DynamicResources,
    args_model=DynamicResourcesArgs,
    watches=(RESOURCE_CLAIMS, RESOURCE_SLICES, DEVICE_CLASSES),
    gated_watches=(("DRADeviceTaintRules", DEVICE_TAINT_RULES),),
)

__all__ = [
    "DEFAULT_FILTER_TIMEOUT_SECONDS",
    "DEVICE_CLASSES",
    "DEVICE_TAINT_RULES",
    "RESOURCE_CLAIMS",
    "RESOURCE_CLAIM_TEMPLATES",
    "RESOURCE_SLICES",
    "SPEC",
    "DynamicResources",
    "DynamicResourcesArgs",
]
