"""Opportunistic batching in the simulator, with the OpportunisticBatching gate on and off,
side by side in one run:

- SchedulingOnePodPerNode, 5,000 nodes / 5,000 pods that each fill the node they get, under
  the default profile without PodTopologySpread (whose system defaults make every pod
  unsignable): the second pod on reuses the first one's ranking;
- SchedulingBasic, 5,000 nodes / 10,000 pods under the default profile, which never batches:
  what asking for hints and counting them costs when nothing can be reused.

    python -m bench.batching           # from the repository root
    python -m bench.batching --quick   # the same at a tenth of the size
"""

from __future__ import annotations

import argparse

from bench.simulate_basic import Variant
from bench.simulate_basic import describe
from bench.simulate_basic import spawn

RUNS = (
    ("SchedulingOnePodPerNode", 5000, 5000, ("PodTopologySpread",)),
    ("SchedulingBasic", 5000, 10000, ()),
)


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="at a tenth of the size")
    args = parser.parse_args()
    scale = 10 if args.quick else 1
    for workload, nodes, pods, disabled in RUNS:
        figures = {}
        for batching in (False, True):
            variant = Variant(batching, disabled)
            figures[batching] = spawn(workload, nodes // scale, pods // scale, True, variant)
            gate = "on " if batching else "off"
            print(f"batching {gate} {describe(figures[batching])}", flush=True)
        off, on = figures[False]["podsPerSecond"], figures[True]["podsPerSecond"]
        if off:
            without = f" without {', '.join(disabled)}" if disabled else ""
            print(f"{workload}{without}: batching on / off {on / off:.2f}x", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
