"""A ClusterAPI wrapper that passes reads straight on and hands every write to one guard.

Two wrappers judge the writes of the client they wrap without changing them: the read-only
client refuses every write, and the leader fence lets a write go only within the leader's
tenure. The forwarding of the plugin-facing calls is the same for both, so it is written here
once; each wrapper says only what it does with a write, in `_guard`.
"""

from __future__ import annotations

from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from typing import Generic
from typing import Literal
from typing import TypeVar

from scheduler.framework.handle import ClusterAPI
from scheduler.objects.pod import Pod

WriteCall = Literal["bind", "delete_pod", "patch_pod_status", "patch_object", "create", "delete"]
# The wrapped client's own type, so a wrapper over a wider client (one that also lists and
# watches) reaches those calls through the same reference.
API = TypeVar("API", bound=ClusterAPI)


@dataclass(frozen=True, slots=True)
class Write:
    """A write about to be made, described well enough for a guard to word its messages."""

    call: WriteCall
    resource: str
    namespace: str
    name: str
    # Where a Binding puts its pod; empty for every other write.
    node_name: str = ""

    @property
    def key(self) -> str:
        """`namespace/name` of the object written, as `Pod.key` spells it."""
        return f"{self.namespace}/{self.name}"

    @property
    def description(self) -> str:
        """The write in a few words, as the guards name it in their errors."""
        match self.call:
            case "bind":
                return f"binding of {self.key} to {self.node_name}"
            case "delete_pod":
                return f"deletion of pod {self.key}"
            case "patch_pod_status":
                return f"status patch of pod {self.key}"
            case "patch_object":
                return f"patch of {self.resource} {self.key}"
            case "create":
                return f"creation of {self.resource} {self.key}"
            case "delete":
                return f"deletion of {self.resource} {self.key}"


class GuardedClusterAPI(Generic[API]):
    """Forwards `get` to `api` as it is, and each write through `_guard`, which subclasses
    define: it either awaits `send` (and so makes the write) or raises instead."""

    def __init__(self, api: API) -> None:
        self._api = api

    async def _guard(self, write: Write, send: Callable[[], Awaitable[None]]) -> None:
        raise NotImplementedError

    async def get(self, resource: str, namespace: str, name: str) -> dict[str, Any]:
        # A read changes nothing: no guard has a say in it.
        return await self._api.get(resource, namespace, name)

    async def bind(self, pod: Pod, node_name: str) -> None:
        write = Write("bind", "pods", pod.namespace, pod.name, node_name)
        await self._guard(write, lambda: self._api.bind(pod, node_name))

    async def delete_pod(self, namespace: str, name: str, uid: str = "") -> None:
        write = Write("delete_pod", "pods", namespace, name)
        await self._guard(write, lambda: self._api.delete_pod(namespace, name, uid))

    async def patch_pod_status(self, namespace: str, name: str, patch: Mapping[str, Any]) -> None:
        write = Write("patch_pod_status", "pods", namespace, name)
        await self._guard(write, lambda: self._api.patch_pod_status(namespace, name, patch))

    async def patch_object(
        self,
        resource: str,
        namespace: str,
        name: str,
        patch: Mapping[str, Any],
        subresource: str = "",
    ) -> None:
        write = Write("patch_object", resource, namespace, name)
        await self._guard(
            write, lambda: self._api.patch_object(resource, namespace, name, patch, subresource)
        )

    async def create(self, resource: str, obj: Mapping[str, Any]) -> dict[str, Any]:
        meta = obj.get("metadata") or {}
        name = str(meta.get("name") or meta.get("generateName") or "")
        write = Write("create", resource, str(meta.get("namespace") or ""), name)
        created: dict[str, Any] = {}

        async def send() -> None:
            created.update(await self._api.create(resource, obj))

        await self._guard(write, send)
        return created

    async def delete(self, resource: str, namespace: str, name: str) -> None:
        write = Write("delete", resource, namespace, name)
        await self._guard(write, lambda: self._api.delete(resource, namespace, name))
