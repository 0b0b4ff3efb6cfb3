"""Python's cyclic garbage collector held off while the daemon starts.

The initial lists build every object of the cluster at once (a dozen dicts and lists per pod,
decoded and then parsed), and each collection those allocations trigger walks the growing heap
again: on 5,000 nodes and 10,000 pods that took about half of decoding and parsing. None of
it is cyclic garbage, so automatic collection waits until the informers have synced, and what
start-up built is then frozen (`gc.freeze`): it lives as long as the process, and later
collections need not walk it again. Objects freed by reference counting are freed as always;
only cycles among frozen objects would stay. A daemon that waits long for its API server
collects again after `HOLD_LIMIT_S` without freezing, so retries do not pile up garbage.
"""

from __future__ import annotations

import gc

HOLD_LIMIT_S = 60.0


class CollectionHold:
    """Automatic collection off from `hold` to `release` (only if it was on to begin with)."""

    def __init__(self) -> None:
        self._holding = False

    def hold(self) -> None:
        if gc.isenabled():
            gc.disable()
            self._holding = True

    def release(self, *, freeze: bool) -> None:
        """Collect automatically again; with `freeze`, never walk what exists now again."""
        if not self._holding:
            return
        self._holding = False
        if freeze:
            gc.freeze()
        gc.enable()


START_UP = CollectionHold()
