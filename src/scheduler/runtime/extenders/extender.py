"""One configured HTTP extender: which pods it cares about and its four verbs."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from typing import TypeVar

from scheduler.config import Extender
from scheduler.objects.pod import Pod
from scheduler.runtime.extenders import wire
from scheduler.runtime.extenders.transport import ExtenderCallError
from scheduler.runtime.extenders.transport import ExtenderTransport

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class FilterAnswer:
    """What an extender's filter kept, and why it dropped what it names."""

    node_names: tuple[str, ...]
    failed: Mapping[str, str]
    failed_and_unresolvable: Mapping[str, str]


class HTTPExtender:
    def __init__(self, config: Extender, *, path: str = "extenders") -> None:
        self.config = config
        self.name = config.url_prefix
        self.ignorable = config.ignorable
        self.weight = config.weight
        self.node_cache_capable = config.node_cache_capable
        self.managed_resources = frozenset(r.name for r in config.managed_resources)
        self.transport = ExtenderTransport(config, path=path)

    @property
    def is_filter(self) -> bool:
        return bool(self.config.filter_verb)

    @property
    def is_prioritizer(self) -> bool:
        return bool(self.config.prioritize_verb)

    @property
    def is_binder(self) -> bool:
        return bool(self.config.bind_verb)

    def is_interested(self, pod: Pod) -> bool:
        """An extender managing resources sees only pods whose containers or init containers
        request or limit one of them; one managing none sees every pod."""
        if not self.managed_resources:
            return True
        spec = pod.raw.get("spec") or {}
        for container in [*(spec.get("containers") or ()), *(spec.get("initContainers") or ())]:
            resources = container.get("resources") or {}
            for kind in ("requests", "limits"):
                if self.managed_resources.intersection(resources.get(kind) or ()):
                    return True
        return False

    async def filter(self, pod: Pod, nodes: Sequence[Mapping[str, Any]]) -> FilterAnswer:
        """The nodes of `nodes` the extender keeps; raises ExtenderCallError as upstream
        fails (an error in the answer, or a node the extender made up)."""
        names = [str(node["metadata"]["name"]) for node in nodes]
        if not self.is_filter:
            return FilterAnswer(tuple(names), {}, {})
        args = wire.extender_args(pod.raw, nodes, node_names_only=self.node_cache_capable)
        result = await self._call(self.config.filter_verb, args, wire.parse_filter_result)
        if result.error:
            raise ExtenderCallError(result.error)
        kept: tuple[str, ...] = ()
        if self.node_cache_capable and result.node_names is not None:
            offered = set(names)
            for name in result.node_names:
                if name not in offered:
                    raise ExtenderCallError(
                        f'extender "{self.name}" claims a filtered node "{name}" which is not '
                        "found in the input node list"
                    )
            kept = result.node_names
        elif result.nodes is not None:
            kept = tuple(str((n.get("metadata") or {}).get("name", "")) for n in result.nodes)
        return FilterAnswer(kept, result.failed, result.failed_and_unresolvable)

    async def prioritize(
        self, pod: Pod, nodes: Sequence[Mapping[str, Any]]
    ) -> list[tuple[str, int]]:
        """(host, score) pairs as the extender sent them (scores 0-10 by contract)."""
        args = wire.extender_args(pod.raw, nodes, node_names_only=self.node_cache_capable)
        return await self._call(self.config.prioritize_verb, args, wire.parse_host_priorities)

    async def bind(self, pod: Pod, node: str) -> None:
        args = wire.binding_args(pod.namespace, pod.name, pod.uid, node)
        error = await self._call(self.config.bind_verb, args, wire.parse_binding_result)
        if error:
            raise ExtenderCallError(error)

    async def _call(self, verb: str, payload: Any, parse: Callable[[Any], T]) -> T:
        answer = await self.transport.post(verb, payload)
        try:
            return parse(answer)
        except wire.WireError as exc:
            url = self.transport.url(verb)
            raise ExtenderCallError(f"extender at URL {url} answered {verb}: {exc}") from None

    async def close(self) -> None:
        await self.transport.close()
