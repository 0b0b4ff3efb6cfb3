"""ElasticQuota: one per namespace. `min` is guaranteed (0 where unset) and lent to others while
unused; `max` is the cap. Use counts pods' requests of cpu, memory, ephemeral-storage and
scalar (extended, hugepages) resources.

Which resources a check compares follows scheduler-plugins: cpu, memory and ephemeral-storage
always (its resource type holds them as fields), and an extended resource where what is being
added (the pod, with the nominated pods counted with it) requests it, or, for a check of use
alone and for the sum of mins (`QuotaUsage.over_total_min`), where the use holds it.

Differences from scheduler-plugins, kept on purpose:
- A `max` caps only the resources it names. Upstream caps cpu, memory and ephemeral-storage at
  0 when a `max` is set but leaves them out (`max: {}` included), rejecting every pod that asks
  for them; only an absent `max` leaves them unlimited there.
- A pod's use is its effective request as kube-scheduler counts it (sidecars summed, pod-level
  resources honoured); upstream's plugin sums the containers, takes the largest of that and
  each init container, and adds the overhead.
- A min above max is refused (`parse_quota`); upstream applies the quota as written.
Where use and status.used differ too, `usage` and `status` say."""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from scheduler.objects.errors import InvalidObjectError
from scheduler.objects.raw import DEFAULT_NAMESPACE
from scheduler.objects.resources import CPU
from scheduler.objects.resources import EPHEMERAL_STORAGE
from scheduler.objects.resources import MEMORY
from scheduler.objects.resources import PODS
from scheduler.objects.resources import parse_resource_list

ELASTIC_QUOTA_RESOURCE = "elasticquotas"
# No pod requests `pods`, so upstream's use of it never moves and a quota naming it limits
# nothing; leaving it out of the use says so.
_UNCOUNTED = (PODS,)
_ALWAYS_COMPARED = (CPU, MEMORY, EPHEMERAL_STORAGE)
_NOTHING: Mapping[str, int] = {}


def counted(requests: Mapping[str, int]) -> dict[str, int]:
    return {name: amount for name, amount in requests.items() if name not in _UNCOUNTED}


def compared(added: Mapping[str, int]) -> set[str]:
    """The resources a check of use with `added` compares."""
    return {*_ALWAYS_COMPARED, *added}


@dataclass(frozen=True, slots=True)
class ElasticQuota:
    namespace: str
    name: str
    min: Mapping[str, int]
    max: Mapping[str, int]  # only the resources it caps

    def over_max(self, used: Mapping[str, int], added: Mapping[str, int]) -> bool:
        """Whether the namespace's use with `added` would pass max (unlimited where unset)."""
        return any(
            used.get(name, 0) + added.get(name, 0) > self.max[name]
            for name in compared(added)
            if name in self.max
        )

    def over_min(self, used: Mapping[str, int], added: Mapping[str, int] | None = None) -> bool:
        """Whether the namespace's use, with `added` if given, is above its min."""
        names = compared(used if added is None else added)
        extra = added or _NOTHING
        return any(used.get(n, 0) + extra.get(n, 0) > self.min.get(n, 0) for n in names)


def parse_quota(raw: Mapping[str, Any]) -> ElasticQuota:
    meta = raw.get("metadata") or {}
    namespace = str(meta.get("namespace") or DEFAULT_NAMESPACE)
    name = str(meta.get("name") or "")
    spec = raw.get("spec") or {}
    where = f"ElasticQuota {namespace}/{name}: spec"
    if not isinstance(spec, Mapping):
        raise InvalidObjectError(f"{where}: must be an object")
    low = parse_resource_list(spec.get("min"), f"{where}.min")
    high = parse_resource_list(spec.get("max"), f"{where}.max")
    for resource, amount in low.items():
        if resource in high and amount > high[resource]:
            raise InvalidObjectError(f"{where}.min.{resource}: must not be above max")
    return ElasticQuota(namespace, name, low, high)


def sum_of(amounts: Iterable[Mapping[str, int]]) -> dict[str, int]:
    total: dict[str, int] = {}
    for part in amounts:
        for name, amount in part.items():
            total[name] = total.get(name, 0) + amount
    return total
