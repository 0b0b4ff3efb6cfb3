"""ElasticQuota: one per namespace. `min` is guaranteed (0 where unset) and lent to others while
unused; `max` is the cap (unlimited where unset). Usage counts scheduled pods' requests of cpu,
memory and scalar (extended, hugepages) resources, as scheduler-plugins counts them."""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from scheduler.objects.errors import InvalidObjectError
from scheduler.objects.raw import DEFAULT_NAMESPACE
from scheduler.objects.resources import EPHEMERAL_STORAGE
from scheduler.objects.resources import PODS
from scheduler.objects.resources import parse_resource_list

ELASTIC_QUOTA_RESOURCE = "elasticquotas"
# Resources quotas do not count (upstream compares cpu, memory and scalar resources only).
_UNCOUNTED = (EPHEMERAL_STORAGE, PODS)


def counted(requests: Mapping[str, int]) -> dict[str, int]:
    return {name: amount for name, amount in requests.items() if name not in _UNCOUNTED}


@dataclass(frozen=True, slots=True)
class ElasticQuota:
    namespace: str
    name: str
    min: Mapping[str, int]
    max: Mapping[str, int]  # only the resources it caps

    def over_max(self, used: Mapping[str, int]) -> list[str]:
        return sorted(n for n, amount in used.items() if n in self.max and amount > self.max[n])

    def over_min(self, used: Mapping[str, int]) -> bool:
        return any(amount > self.min.get(name, 0) for name, amount in used.items())


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
    return ElasticQuota(namespace, name, counted(low), counted(high))


def sum_of(amounts: Iterable[Mapping[str, int]]) -> dict[str, int]:
    total: dict[str, int] = {}
    for part in amounts:
        for name, amount in part.items():
            total[name] = total.get(name, 0) + amount
    return total
