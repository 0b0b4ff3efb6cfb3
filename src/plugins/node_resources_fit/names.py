"""Resource-name classes as kube-scheduler draws them, and qualified-name checks for args.

These differ slightly from `scheduler.objects.resources`: upstream treats any name containing
`kubernetes.io/` (not only names starting with it) as native, and calls a name "scalar" only if
it is extended, hugepages, prefixed-native or an attachable-volumes count. A resource outside
those classes (for example an unprefixed `foo`) is never checked nor scored.
"""

from __future__ import annotations

import re

from scheduler.objects.resources import CPU, EPHEMERAL_STORAGE, MEMORY

_NATIVE_MARK = "kubernetes.io/"
_HUGEPAGES_PREFIX = "hugepages-"
_ATTACHABLE_VOLUMES_PREFIX = "attachable-volumes-"
_QUOTA_PREFIX = "requests."

_NAME_MAX = 63
_SUBDOMAIN_MAX = 253
_NAME_REGEX = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_SUBDOMAIN_REGEX = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_NAME = re.compile(f"^{_NAME_REGEX}$")
_SUBDOMAIN = re.compile(f"^{_SUBDOMAIN_REGEX}$")

# Upstream's wording, so configuration errors read the same as kube-scheduler's.
_NAME_CHARS = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    f"validation is '{_NAME_REGEX}')"
)
_SUBDOMAIN_CHARS = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    f"for validation is '{_SUBDOMAIN_REGEX}')"
)

CORE_RESOURCES = (CPU, MEMORY, EPHEMERAL_STORAGE)


def is_native(name: str) -> bool:
    return "/" not in name or _NATIVE_MARK in name


def is_extended(name: str) -> bool:
    """A vendor resource such as example.com/gpu (what ignoredResources may name)."""
    if is_native(name) or name.startswith(_QUOTA_PREFIX):
        return False
    return not qualified_name_errors(_QUOTA_PREFIX + name)


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


def qualified_name_errors(value: str) -> list[str]:
    """Why `value` is not a valid label-style qualified name ([prefix/]name); empty if it is."""
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
        errors: list[str] = []
    elif len(parts) == 2:
        prefix, name = parts
        errors = _prefix_errors(prefix)
    else:
        return [
            f"a qualified name {_NAME_CHARS} with an optional DNS subdomain prefix and '/' "
            "(e.g. 'example.com/MyName')"
        ]
    if not name:
        errors.append("name part must be non-empty")
    elif len(name) > _NAME_MAX:
        errors.append(f"name part must be no more than {_NAME_MAX} characters")
    if name and not _NAME.match(name):
        errors.append(f"name part {_NAME_CHARS}")
    return errors


def _prefix_errors(prefix: str) -> list[str]:
    if not prefix:
        return ["prefix part must be non-empty"]
    errors = []
    if len(prefix) > _SUBDOMAIN_MAX:
        errors.append(f"prefix part must be no more than {_SUBDOMAIN_MAX} characters")
    if not _SUBDOMAIN.match(prefix):
        errors.append(f"prefix part {_SUBDOMAIN_CHARS}")
    return errors
