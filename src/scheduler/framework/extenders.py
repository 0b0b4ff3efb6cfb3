"""What a plugin may ask of the scheduler's HTTP extenders (kube-scheduler's Handle.Extenders()).

Only preemption asks them anything: after the dry run, the extenders configured with a
`preemptVerb` may drop candidate nodes or change their victims before one is chosen. The calls
go over HTTP, so they are awaited; a plugin makes them from `post_filter_awaiting`, which the
scheduler calls in place of `post_filter` for a pod whose attempt already awaits extenders.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from scheduler.framework.errors import SchedulerError
from scheduler.objects.pod import Pod


@dataclass(frozen=True, slots=True)
class Victims:
    """Pods to preempt on a node, most important first, and how many of them break a
    PodDisruptionBudget."""

    pods: tuple[Pod, ...]
    num_pdb_violations: int


class ExtenderError(SchedulerError):
    """An extender that may not be ignored failed; the text is the error upstream reports."""


# The pods the scheduler's cache has on a node, or None for a node it does not know.
PodsOnNode = Callable[[str], Sequence[Pod] | None]


class Extenders(Protocol):
    """The configured extenders, as plugins see them."""

    def interested_in_preemption(self, pod: Pod) -> bool:
        """Whether some extender with a preempt verb manages one of the pod's resources."""
        ...

    async def process_preemption(
        self, pod: Pod, victims: Mapping[str, Victims], pods_on: PodsOnNode
    ) -> dict[str, Victims]:
        """The candidates (node name to victims) once every interested extender with a preempt
        verb has had its say, each given what the one before it kept. Raises ExtenderError
        when one that may not be ignored fails or answers a node without victims."""
        ...


class NoExtenders:
    """The extenders of a scheduler configured with none."""

    def interested_in_preemption(self, pod: Pod) -> bool:
        return False

    async def process_preemption(
        self, pod: Pod, victims: Mapping[str, Victims], pods_on: PodsOnNode
    ) -> dict[str, Victims]:
        return dict(victims)


NO_EXTENDERS = NoExtenders()
