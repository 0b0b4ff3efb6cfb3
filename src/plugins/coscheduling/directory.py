"""Finding a pod's PodGroup through the informers, parsed once per object version."""

from __future__ import annotations

from plugins.coscheduling.dialects import GroupRef
from plugins.coscheduling.pod_group import PodGroup
from plugins.coscheduling.pod_group import parse_pod_group
from scheduler.framework import Handle
from scheduler.objects.errors import InvalidObjectError


class GroupDirectory:
    def __init__(self, handle: Handle) -> None:
        self._handle = handle
        self._parsed: dict[GroupRef, tuple[str, PodGroup | str]] = {}

    def lookup(self, ref: GroupRef) -> PodGroup | str | None:
        """The group; None if it does not exist; a message if it cannot be read."""
        raw = self._handle.lister(ref.resource).get(ref.namespace, ref.name)
        if raw is None:
            self._parsed.pop(ref, None)
            return None
        version = str((raw.get("metadata") or {}).get("resourceVersion") or "")
        cached = self._parsed.get(ref)
        if cached is not None and cached[0] == version and version:
            return cached[1]
        parsed: PodGroup | str
        try:
            parsed = parse_pod_group(ref, raw)
        except InvalidObjectError as exc:
            parsed = str(exc)
        self._parsed[ref] = (version, parsed)
        return parsed
