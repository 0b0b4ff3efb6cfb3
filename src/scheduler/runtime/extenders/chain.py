"""The configured extenders in upstream's order, and the calls the scheduler makes on them.

Extenders that may not be ignored come first, then the ignorable ones (as kube-scheduler
orders them), each group in configuration order. Filters run one after another on what the
previous one kept; prioritizers run concurrently; preemption's candidates pass through each
extender with a preempt verb in turn; the first interested binder binds. The chain is the
`Extenders` a plugin's Handle offers.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Any

from scheduler.config import Extender
from scheduler.framework.extenders import ExtenderError
from scheduler.framework.extenders import PodsOnNode
from scheduler.framework.extenders import Victims
from scheduler.framework.status import MAX_NODE_SCORE
from scheduler.framework.status import Code
from scheduler.framework.status import Status
from scheduler.objects.pod import Pod
from scheduler.observability import V_PLUGIN
from scheduler.observability import get_logger
from scheduler.observability import log_v
from scheduler.observability.label_values import OPERATION_PRIORITIZING_EXTENDER
from scheduler.runtime.extenders.extender import HTTPExtender
from scheduler.runtime.extenders.transport import ExtenderCallError
from scheduler.runtime.extenders.wire import MAX_EXTENDER_PRIORITY

_log = get_logger("extenders")

GoroutineObserver = Callable[[str, int], None]


@dataclass(slots=True)
class FilterOutcome:
    """Nodes every interested filter kept, and a status for each node one of them named."""

    node_names: list[str]
    statuses: dict[str, Status] = field(default_factory=dict)

    @property
    def rejected_any(self) -> bool:
        return bool(self.statuses)


def scaled_score(score: int, weight: int) -> int:
    """An extender's 0-10 score in the scheduler's 0-100 range, times its weight."""
    return score * weight * (MAX_NODE_SCORE // MAX_EXTENDER_PRIORITY)


# Upstream's words for a failed call of an ignorable extender that is passed over.
_SKIPPED_IN_FILTER = "Skipping extender as it returned error and has ignorable flag set"
_SKIPPED_IN_BIND = "Skipping extender in bind as it returned error and has ignorable flag set"
_SKIPPED_IN_PREEMPTION = "Skipped extender as it returned error and has ignorable flag set"
_NO_VICTIMS_IGNORED = "Ignored node for which the extender didn't report victims"
# Upstream logs what preemption passes over, and each extender it builds, at V(2).
_V_PREEMPTION = 2
_V_SETTINGS = 2
_REDACTED = "--- REDACTED ---"


def _passed_over(extender: HTTPExtender, pod: Pod, exc: ExtenderCallError, message: str) -> bool:
    """Whether a failed call is passed over (the extender is ignorable; logged as `message`);
    otherwise the failure is the caller's to report."""
    if not extender.ignorable:
        return False
    _log.info(message, extender=extender.name, pod=pod.key, err=str(exc))
    return True


class ExtenderChain:
    def __init__(
        self, configs: Sequence[Extender], *, goroutines: GoroutineObserver | None = None
    ) -> None:
        built = [
            HTTPExtender(config, path=f"extenders[{index}]") for index, config in enumerate(configs)
        ]
        self.extenders = [e for e in built if not e.ignorable] + [e for e in built if e.ignorable]
        self._configs = list(configs)
        self._goroutines = goroutines or (lambda _operation, _delta: None)

    def log_settings(self) -> None:
        """kube-scheduler's start-up record of each extender, private key left out."""
        for config in self._configs:
            settings = config.model_dump(by_alias=True, mode="json", exclude_none=True)
            tls = settings.get("tlsConfig") or {}
            if tls.get("keyData"):
                tls["keyData"] = _REDACTED
            log_v(_log, _V_SETTINGS, "Creating extender", extender=settings)

    def __bool__(self) -> bool:
        return bool(self.extenders)

    def interested_in(self, pod: Pod) -> bool:
        return any(e.is_interested(pod) for e in self.extenders)

    def interested_in_preemption(self, pod: Pod) -> bool:
        return any(e.supports_preemption and e.is_interested(pod) for e in self.extenders)

    async def filter(self, pod: Pod, nodes: Sequence[Mapping[str, Any]]) -> FilterOutcome:
        """Raises ExtenderCallError when an extender that may not be ignored fails."""
        by_name = {str(n["metadata"]["name"]): n for n in nodes}
        outcome = FilterOutcome(list(by_name))
        for extender in self.extenders:
            if not outcome.node_names:
                break
            if not extender.is_filter or not extender.is_interested(pod):
                continue
            current = [by_name[name] for name in outcome.node_names]
            try:
                answer = await extender.filter(pod, current)
            except ExtenderCallError as exc:
                if not _passed_over(extender, pod, exc, _SKIPPED_IN_FILTER):
                    raise
                continue
            for name, message in answer.failed_and_unresolvable.items():
                outcome.statuses[name] = Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, message)
            for name, message in answer.failed.items():
                if name not in answer.failed_and_unresolvable:
                    outcome.statuses[name] = Status(Code.UNSCHEDULABLE, message)
            outcome.node_names = [name for name in answer.node_names if name in by_name]
        return outcome

    async def prioritize(self, pod: Pod, nodes: Sequence[Mapping[str, Any]]) -> dict[str, int]:
        """Each node's summed, scaled extender scores. A failing prioritizer gives no score,
        as upstream ignores prioritize errors."""
        calls = [
            self._prioritize_one(extender, pod, nodes)
            for extender in self.extenders
            if extender.is_prioritizer and extender.is_interested(pod)
        ]
        totals: dict[str, int] = {}
        for scores in await asyncio.gather(*calls):
            for host, score in scores.items():
                totals[host] = totals.get(host, 0) + score
        return totals

    async def _prioritize_one(
        self, extender: HTTPExtender, pod: Pod, nodes: Sequence[Mapping[str, Any]]
    ) -> dict[str, int]:
        self._goroutines(OPERATION_PRIORITIZING_EXTENDER, 1)
        try:
            pairs = await extender.prioritize(pod, nodes)
        except ExtenderCallError as exc:
            log_v(
                _log,
                V_PLUGIN,
                "Failed to run extender's priority function. No score given by this extender.",
                extender=extender.name,
                pod=pod.key,
                err=str(exc),
            )
            return {}
        finally:
            self._goroutines(OPERATION_PRIORITIZING_EXTENDER, -1)
        scores: dict[str, int] = {}
        for host, score in pairs:
            scores[host] = scores.get(host, 0) + scaled_score(score, extender.weight)
        return scores

    async def process_preemption(
        self, pod: Pod, victims: Mapping[str, Victims], pods_on: PodsOnNode
    ) -> dict[str, Victims]:
        """Preemption's candidates after every interested extender with a preempt verb, each
        given what the one before kept. Raises ExtenderError as upstream fails the preemption:
        an extender that may not be ignored failed, or kept a node without naming a victim."""
        current = dict(victims)
        for extender in self.extenders:
            if not current:
                break
            if not extender.supports_preemption or not extender.is_interested(pod):
                continue
            try:
                answered = await extender.process_preemption(pod, current, pods_on)
            except ExtenderCallError as exc:
                if not extender.ignorable:
                    raise ExtenderError(str(exc)) from None
                log_v(
                    _log,
                    _V_PREEMPTION,
                    _SKIPPED_IN_PREEMPTION,
                    extender=extender.name,
                    err=str(exc),
                )
                continue
            for node, kept in list(answered.items()):
                if kept.pods:
                    continue
                if not extender.ignorable:
                    raise ExtenderError(f'expected at least one victim pod on node "{node}"')
                del answered[node]
                log_v(_log, _V_PREEMPTION, _NO_VICTIMS_IGNORED, node=node, extender=extender.name)
            current = answered
        return current

    async def bind(self, pod: Pod, node: str) -> Status | None:
        """The binding extender's verdict, or None when no interested binder took the pod
        (the Bind plugins then bind it)."""
        for extender in self.extenders:
            if not extender.is_binder or not extender.is_interested(pod):
                continue
            try:
                await extender.bind(pod, node)
            except ExtenderCallError as exc:
                if _passed_over(extender, pod, exc, _SKIPPED_IN_BIND):
                    continue
                return Status.from_error(str(exc))
            return Status()
        return None

    async def close(self) -> None:
        await asyncio.gather(*(e.close() for e in self.extenders))
