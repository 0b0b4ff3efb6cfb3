"""Resource-name classes as kube-scheduler draws them, as args and scoring use them.

These differ slightly from `scheduler.objects.resources`: upstream treats any name containing
`kubernetes.io/` (not only names starting with it) as native, and calls a name "scalar" only if
it is extended, hugepages, prefixed-native or an attachable-volumes count. A resource outside
those classes (for example an unprefixed `foo`) is never checked nor scored.
"""

from __future__ import annotations

from scheduler.objects.names import qualified_name_problems
from scheduler.objects.resources import CPU
from scheduler.objects.resources import EPHEMERAL_STORAGE
from scheduler.objects.resources import MEMORY

_NATIVE_MARK = "kubernetes.io/"
_HUGEPAGES_PREFIX = "hugepages-"
_ATTACHABLE_VOLUMES_PREFIX = "attachable-volumes-"
_QUOTA_PREFIX = "requests."

CORE_RESOURCES = (CPU, MEMORY, EPHEMERAL_STORAGE)


def is_native(name: str) -> bool:
    return "/" not in name or _NATIVE_MARK in name


def is_extended(name: str) -> bool:
    """A vendor resource such as example.com/gpu (what ignoredResources may name)."""
    if is_native(name) or name.startswith(_QUOTA_PREFIX):
        return False
    return not qualified_name_problems(_QUOTA_PREFIX + name)


def is_scalar(name: str) -> bool:
    """Resources that are counted as plain integers beside cpu, memory and ephemeral-storage."""
    return (
        is_extended(name)
        or name.startswith((_HUGEPAGES_PREFIX, _ATTACHABLE_VOLUMES_PREFIX))
        or _NATIVE_MARK in name
    )


def resource_group(name: str) -> str:
    """The part before the first '/', which ignoredResourceGroups matches."""
    return name.split("/", 1)[0]
