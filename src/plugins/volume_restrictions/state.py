"""What VolumeRestrictions computes in PreFilter for Filter and the PreFilter extensions."""

from __future__ import annotations

from dataclasses import dataclass

from plugins.helpers.volumes import pod_claims
from plugins.volume_restrictions.conflicts import RawVolume
from scheduler.framework import NodeTable
from scheduler.framework import Pod

PRE_FILTER_STATE_KEY = "PreFilterVolumeRestrictions"


@dataclass(slots=True)
class PreFilterState:
    """The pod's restricted in-tree volumes, the names of its ReadWriteOncePod claims and how
    many scheduled pods already use one of those claims."""

    restricted: tuple[RawVolume, ...]
    read_write_once_pod_claims: frozenset[str]
    conflicting_claim_refs: int

    def clone(self) -> PreFilterState:
        return PreFilterState(
            self.restricted, self.read_write_once_pod_claims, self.conflicting_claim_refs
        )

    def claim_refs_of(self, pod: Pod) -> int:
        # Upstream compares claim names only, not namespaces; kept for identical dry runs.
        return sum(
            1
            for use in pod_claims(pod)
            if not use.ephemeral and use.claim_name in self.read_write_once_pod_claims
        )

    def update_with_pod(self, pod: Pod, multiplier: int) -> None:
        self.conflicting_claim_refs += multiplier * self.claim_refs_of(pod)


def claims_in_use(table: NodeTable, namespace: str, names: frozenset[str]) -> int:
    """How many of the claims `namespace/names` are used by at least one scheduled pod.

    Scans the pods on every node; it runs only for pods with ReadWriteOncePod claims.
    """
    remaining = set(names)
    found = 0
    for info in table.node_infos:
        for pod in info.pods.values():
            if pod.namespace != namespace:
                continue
            for use in pod_claims(pod):
                if not use.ephemeral and use.claim_name in remaining:
                    remaining.discard(use.claim_name)
                    found += 1
            if not remaining:
                return found
    return found
