"""Assumed versions of PVs and PVCs, laid over the informers' stores.

Reserve assumes that a PV is bound to a claim (or that a claim has a selected node) before the
API knows it, so that the next pod does not pick the same PV. An assumption lasts until the
informer delivers a newer version of the object (normally the result of our own write), the
object disappears, or Unreserve restores it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from plugins.helpers.volumes import name_of
from plugins.helpers.volumes import namespace_of
from plugins.helpers.volumes import resource_version
from scheduler.framework import Lister
from scheduler.objects.raw import RawObject

ObjectKey = tuple[str, str]


class AssumeError(Exception):
    """The object to assume is missing, or was changed from another version than the API
    server's."""


@dataclass(frozen=True, slots=True)
class _Assumed:
    obj: RawObject
    # The resourceVersion of the API object the assumption was made over.
    base_version: int


def key_of(obj: RawObject) -> ObjectKey:
    return (namespace_of(obj), name_of(obj))


class AssumeCache:
    """One resource's objects as the scheduler currently believes them to be."""

    def __init__(self, lister: Callable[[], Lister], resource: str) -> None:
        # The lister is looked up on use: informers are started after plugins are built.
        self._lister = lister
        self._resource = resource
        self._assumed: dict[ObjectKey, _Assumed] = {}

    def get_api(self, key: ObjectKey) -> RawObject | None:
        """The object as the API server last reported it."""
        return self._lister().get(*key)

    def get(self, key: ObjectKey) -> RawObject | None:
        api = self.get_api(key)
        return self._resolve(key, api)

    def _resolve(self, key: ObjectKey, api: RawObject | None) -> RawObject | None:
        assumed = self._assumed.get(key)
        if assumed is None:
            return api
        if api is None or resource_version(api) > assumed.base_version:
            # The API moved on (or the object is gone): the assumption has served its turn.
            del self._assumed[key]
            return api
        return assumed.obj

    def list(self) -> list[RawObject]:
        found: list[RawObject] = []
        for api in self._lister().list():
            current = self._resolve(key_of(api), api)
            if current is not None:
                found.append(current)
        return found

    def assume(self, obj: RawObject) -> None:
        """Assume `obj`, a changed copy of the object the API server last reported: made from
        an older version, it is refused (upstream's words: "out of sync")."""
        key = key_of(obj)
        api = self.get_api(key)
        name = f"{key[0]}/{key[1]}" if key[0] else key[1]
        if api is None:
            raise AssumeError(f'{self._resource} "{name}" not found')
        if resource_version(obj) != resource_version(api):
            raise AssumeError(
                f'"{name}" is out of sync (stored: {resource_version(api)}, '
                f"assume: {resource_version(obj)})"
            )
        self._assumed[key] = _Assumed(obj, resource_version(api))

    def restore(self, key: ObjectKey) -> None:
        self._assumed.pop(key, None)
