"""DynamicResources throughput in the simulator: 5,000 nodes with 8 GPUs each published in
ResourceSlices, 10,000 pods each claiming one GPU through a ResourceClaimTemplate, every node
filtered and scored, next to the same with each node's GPUs partitionable (two GPUs of four
quarters, drawing on counters), with the pods asking for the GPU as an extended resource the
class provides (the scheduler makes their claims), and SchedulingBasic (the same pods without
claims).

    python -m bench.dynamic_resources           # from the repository root
    python -m bench.dynamic_resources --quick   # the same at a tenth of the size
"""

from __future__ import annotations

import argparse

from bench.simulate_basic import describe
from bench.simulate_basic import spawn

NODES, PODS = 5000, 10000


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="at a tenth of the size")
    args = parser.parse_args()
    scale = 10 if args.quick else 1
    claims = spawn("SchedulingWithResourceClaims", NODES // scale, PODS // scale, True)
    print(describe(claims), flush=True)
    partitioned = spawn("SchedulingWithPartitionedDevices", NODES // scale, PODS // scale, True)
    print(describe(partitioned), flush=True)
    extended = spawn("SchedulingWithExtendedResources", NODES // scale, PODS // scale, True)
    print(describe(extended), flush=True)
    basic = spawn("SchedulingBasic", NODES // scale, PODS // scale, True)
    print(describe(basic), flush=True)
    if basic["podsPerSecond"]:
        ratio = claims["podsPerSecond"] / basic["podsPerSecond"]
        print(f"with claims / without, at {NODES // scale} nodes: {ratio:.2f}x")
        ratio = partitioned["podsPerSecond"] / basic["podsPerSecond"]
        print(f"with partitionable devices / without claims: {ratio:.2f}x")
        ratio = extended["podsPerSecond"] / basic["podsPerSecond"]
        print(f"with extended resources from devices / without claims: {ratio:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
