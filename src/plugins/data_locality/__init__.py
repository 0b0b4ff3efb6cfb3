"""The DataLocality score plugin: nodes near the pod's volumes and annotated data score higher."""

from plugins.data_locality.args import DataLocalityArgs
from plugins.data_locality.plugin import DataLocality
from plugins.data_locality.sites import LOCATIONS_ANNOTATION
from plugins.helpers.volumes import PVCS
from plugins.helpers.volumes import PVS
from scheduler.framework import PluginSpec

SPEC = PluginSpec(
    name=DataLocality.name,
    plugin_class=DataLocality,
    args_model=DataLocalityArgs,
    watches=(PVCS, PVS),
)

__all__ = ["LOCATIONS_ANNOTATION", "SPEC", "DataLocality", "DataLocalityArgs"]
