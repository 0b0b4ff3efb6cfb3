"""The DynamicResources plugin: devices for pods' ResourceClaims (resource.k8s.io/v1)."""

from plugins.dynamic_resources.args import DEFAULT_FILTER_TIMEOUT_SECONDS, DynamicResourcesArgs
from plugins.dynamic_resources.names import (
    DEVICE_CLASSES,
    RESOURCE_CLAIM_TEMPLATES,
    RESOURCE_CLAIMS,
    RESOURCE_SLICES,
)
from plugins.dynamic_resources.plugin import DynamicResources
from scheduler.framework import PluginSpec

SPEC = PluginSpec(
    name="DynamicResources",
    plugin_class=DynamicResources,
    args_model=DynamicResourcesArgs,
    watches=(RESOURCE_CLAIMS, RESOURCE_SLICES, DEVICE_CLASSES),
)

__all__ = [
    "DEFAULT_FILTER_TIMEOUT_SECONDS",
    "DEVICE_CLASSES",
    "RESOURCE_CLAIMS",
    "RESOURCE_CLAIM_TEMPLATES",
    "RESOURCE_SLICES",
    "SPEC",
    "DynamicResources",
    "DynamicResourcesArgs",
]
