"""One configured HTTP extender: which pods it cares about and its four verbs."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from typing import TypeVar

from scheduler.config import Extender
from scheduler.framework.extenders import PodsOnNode
from scheduler.framework.extenders import Victims
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
        # Which verbs it was given: each one it lacks is skipped, as upstream skips it.
        self.is_filter = bool(config.filter_verb)
        self.is_prioritizer = bool(config.prioritize_verb)
        self.is_binder = bool(config.bind_verb)
        self.supports_preemption = bool(config.preempt_verb)

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

    async def process_preemption(
        self, pod: Pod, victims: Mapping[str, Victims], pods_on: PodsOnNode
    ) -> dict[str, Victims]:
        """The candidates the extender keeps, with the victims it names; its answer names pods
        by UID, which are looked up among the pods the cache has on each node."""
        sent = {
            node: ([p.raw for p in v.pods], v.num_pdb_violations) for node, v in victims.items()
        }
        args = wire.preemption_args(pod.raw, sent, uids_only=self.node_cache_capable)
        answer = await self._call(self.config.preempt_verb, args, wire.parse_preemption_result)
        return {node: self._victims(node, meta, pods_on) for node, meta in answer.items()}

    def _victims(self, node: str, meta: wire.MetaVictims, pods_on: PodsOnNode) -> Victims:
        pods = pods_on(node)
        if pods is None:
            raise ExtenderCallError(f'nodeinfo not found for node name "{node}"')
        by_uid = {p.uid: p for p in pods}
        named: list[Pod] = []
        for uid in meta.uids:
            found = by_uid.get(uid)
            if found is None:
                # Upstream prints the MetaPod pointer, hence the "&{...}".
                raise ExtenderCallError(
                    f"extender: {self.name} claims to preempt pod (UID: &{{{uid}}}) on node: "
                    f"{node}, but the pod is not found on that node"
                )
            named.append(found)
        return Victims(tuple(named), meta.num_pdb_violations)

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
