"""Pods that name a scheduler nobody runs: the danger of removing a scheduler too early.

Such a pod stays Pending for ever with no Event and no condition, since no scheduler looks at
it. The daemon counts them at scrape time from its pod informer (which holds every
non-terminal pod of the cluster) as `scheduler_unserved_pods{scheduler_name}`.

Which names are served: this daemon's own profiles, and `default-scheduler`, which every
cluster runs. A daemon cannot see other schedulers' profiles (a Lease names a holder, not the
schedulerNames it serves), so pods of a further scheduler count as unserved here too; they
are labelled by name, and the alert (deploy/monitoring/prometheusrule.yaml, the chart's
`prometheusRule.servedSchedulerNames`) leaves out the names known to be served elsewhere.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

from scheduler.cluster.informer import Informer
from scheduler.config import EffectiveProfile

DEFAULT_SCHEDULER = "default-scheduler"


def served_scheduler_names(profiles: Sequence[EffectiveProfile]) -> frozenset[str]:
    return frozenset({DEFAULT_SCHEDULER, *(p.scheduler_name for p in profiles)})


def count_unserved(pods: Iterable[Mapping[str, Any]], served: frozenset[str]) -> dict[str, int]:
    """{schedulerName: unassigned pods naming it} for names not in `served`."""
    counts: dict[str, int] = {}
    for pod in pods:
        spec = pod.get("spec") or {}
        if spec.get("nodeName"):
            continue
        name = spec.get("schedulerName") or DEFAULT_SCHEDULER
        if name not in served:
            counts[name] = counts.get(name, 0) + 1
    return counts


def unserved_pods_source(
    informers: Callable[[], Mapping[str, Informer]], served: frozenset[str]
) -> Callable[[], Mapping[str, int]]:
    """Reads the pod informer's store when scraped (nothing before it exists)."""

    def read() -> Mapping[str, int]:
        pods = informers().get("pods")
        return {} if pods is None else count_unserved(pods.store.list(), served)

    return read
