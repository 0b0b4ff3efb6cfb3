"""The two least-populated domains of a hard constraint, as upstream tracks them.

Upstream keeps two (domain, count) pairs instead of every count so the global minimum is cheap
to read; AddPod/RemovePod update them one domain at a time. After such updates the second pair
is not guaranteed to be the true second minimum, so Filter's global minimum can differ from the
exact one in preemption dry runs and with nominated pods; it is kept this way to decide exactly
as kube-scheduler does.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

# Count of a path that holds no domain yet (upstream uses MaxInt32).
EMPTY_COUNT = 2**31 - 1
NO_DOMAIN = -1
# Larger than any count, to set a domain aside when looking for the next least one.
_NEVER_LEAST = 2**62

Int64Array = npt.NDArray[np.int64]


class CriticalPaths:
    __slots__ = ("counts", "domains")

    def __init__(self) -> None:
        self.domains = [NO_DOMAIN, NO_DOMAIN]
        self.counts = [EMPTY_COUNT, EMPTY_COUNT]

    @classmethod
    def of(cls, domains: Int64Array, counts: Int64Array) -> CriticalPaths:
        """The paths after offering each domain in turn, computed at once.

        Offering domains one by one leaves the first domain holding the minimum count in the
        first path and, in the second, the first of the remaining domains holding their minimum.
        """
        paths = cls()
        if len(domains) == 0:
            return paths
        first = int(np.argmin(counts))
        paths.domains[0], paths.counts[0] = int(domains[first]), int(counts[first])
        if len(domains) > 1:
            rest = counts.copy()
            rest[first] = _NEVER_LEAST
            second = int(np.argmin(rest))
            paths.domains[1], paths.counts[1] = int(domains[second]), int(counts[second])
        return paths

    @property
    def minimum(self) -> int:
        return self.counts[0]

    def update(self, domain: int, count: int) -> None:
        """A domain's count changed (or a domain appeared) by one pod."""
        domains, counts = self.domains, self.counts
        if domain in (domains[0], domains[1]):
            index = 0 if domains[0] == domain else 1
            counts[index] = count
            if counts[0] > counts[1]:
                domains.reverse()
                counts.reverse()
        elif count < counts[0]:
            domains[1], counts[1] = domains[0], counts[0]
            domains[0], counts[0] = domain, count
        elif count < counts[1]:
            domains[1], counts[1] = domain, count

    def clone(self) -> CriticalPaths:
        copy = CriticalPaths()
        copy.domains = list(self.domains)
        copy.counts = list(self.counts)
        return copy

    def __repr__(self) -> str:
        pairs = ", ".join(f"{d}:{c}" for d, c in zip(self.domains, self.counts, strict=True))
        return f"CriticalPaths({pairs})"
