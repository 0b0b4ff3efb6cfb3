"""Side-by-side benchmark: upstream kube-scheduler, kube-pyscheduler and a null scheduler.

Every run gets a fresh etcd + kube-apiserver and one scheduler. A configuration is a mode
(`defaults`: each scheduler at its own percentageOfNodesToScore; `equal`: both forced to 100),
a load (`drain`: all pods exist before the scheduler starts; `churn`: pods are created at
--rate per second while it runs) and a workload (scheduler_perf's SchedulingBasic,
TopologySpreading or SchedulingPodAntiAffinity shapes). Each configuration runs --repeat times
for each scheduler, repeats interleaved; the table gives medians, and every ratio is the median
of per-repeat ratios to upstream (or to the null scheduler, which binds with no logic and so
shows what the API server allows on this machine).

    python -m bench.compare [--nodes 500 --pods 2000] [--repeat 3] [--modes defaults,equal]
        [--loads drain,churn] [--workloads basic,spreading,antiaffinity]
        [--schedulers upstream,ours,null] [--rate 100] [--leader-elect] [--json FILE]
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path
from typing import Any

from bench.compare_runs import RunSpec
from bench.compare_runs import run_churn
from bench.compare_runs import run_drain
from bench.compare_schedulers import ALL_KINDS
from bench.compare_schedulers import NULL
from bench.compare_schedulers import NULL_EVENTS
from bench.compare_schedulers import OURS
from bench.compare_schedulers import UPSTREAM
from bench.compare_schedulers import SchedulerKind
from bench.compare_schedulers import byte_compile_python_schedulers
from bench.compare_shapes import SHAPES
from bench.compare_summary import CHURN
from bench.compare_summary import DRAIN
from bench.compare_summary import Figures
from bench.compare_summary import RunRecord
from bench.compare_summary import format_table
from bench.compare_summary import group_by_configuration
from bench.compare_summary import summarise
from tests.e2e.binaries import ControlPlaneBinaries
from tests.e2e.binaries import ensure_binaries

# percentageOfNodesToScore per mode; None leaves each scheduler at its own default.
MODES: dict[str, int | None] = {"defaults": None, "equal": 100}
LOADS = (DRAIN, CHURN)
SCHEDULERS = {"upstream": UPSTREAM, "ours": OURS, "null": NULL, "nullevents": NULL_EVENTS}
DEFAULT_SCHEDULERS = ["upstream", "ours", "null"]
PODS_PER_NODE = 110


def _choices(flag: str, allowed: Any) -> Any:
    """An argparse type: a comma-separated subset of `allowed`, in the order given."""

    def parse(text: str) -> list[str]:
        picked = [item.strip() for item in text.split(",") if item.strip()]
        unknown = [item for item in picked if item not in allowed]
        if unknown or not picked:
            raise argparse.ArgumentTypeError(
                f"{flag}: {', '.join(unknown) or 'nothing'} is not one of {', '.join(allowed)}"
            )
        return list(dict.fromkeys(picked))

    return parse


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.compare",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--pods", type=int, default=2000, help="measured pods per run")
    parser.add_argument("--repeat", type=int, default=3, help="runs per configuration")
    parser.add_argument(
        "--modes", type=_choices("--modes", MODES), default=list(MODES), help="defaults,equal"
    )
    parser.add_argument(
        "--loads", type=_choices("--loads", LOADS), default=list(LOADS), help="drain,churn"
    )
    parser.add_argument(
        "--workloads",
        type=_choices("--workloads", SHAPES),
        default=list(SHAPES),
        help="basic,spreading,antiaffinity",
    )
    parser.add_argument(
        "--schedulers",
        type=_choices("--schedulers", SCHEDULERS),
        default=DEFAULT_SCHEDULERS,
        help="upstream,ours,null",
    )
    parser.add_argument("--rate", type=float, default=100.0, help="churn: pods created per second")
    parser.add_argument("--threads", type=int, default=16, help="object-creation threads")
    parser.add_argument(
        "--timeout", type=float, default=900.0, help="seconds per run to bind every pod"
    )
    parser.add_argument(
        "--leader-elect",
        action="store_true",
        help="both schedulers elect a leader, as a Deployment's default configuration does",
    )
    parser.add_argument("--json", type=Path, help="write every raw run and the summary here")
    parser.add_argument("--log-dir", type=Path, help="where scheduler logs go (kept)")
    args = parser.parse_args(argv)
    if args.nodes < 1 or args.pods < 1:
        parser.error("--nodes and --pods must be positive")
    if args.pods > args.nodes * PODS_PER_NODE:
        parser.error(f"--pods: more pods than the nodes can hold ({PODS_PER_NODE} per node)")
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    if not args.rate > 0:
        parser.error("--rate must be positive")
    if args.threads < 1:
        parser.error("--threads must be at least 1")
    return args


def _kinds(names: list[str]) -> list[SchedulerKind]:
    labels = {SCHEDULERS[name] for name in names}
    return [kind for kind in ALL_KINDS if kind.label in labels]


def _run(
    kind: SchedulerKind, binaries: ControlPlaneBinaries, spec: RunSpec, load: str, rate: float
) -> Figures:
    if load == CHURN:
        return run_churn(kind, binaries, spec, rate)
    return run_drain(kind, binaries, spec)


def summary_document(records: list[RunRecord]) -> list[dict[str, Any]]:
    return [
        {
            "mode": mode,
            "load": load,
            "workload": workload,
            "schedulers": [asdict(s) for s in summarise(group, load)],
        }
        for (mode, load, workload), group in group_by_configuration(records).items()
    ]


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    binaries = ensure_binaries()
    log_dir = args.log_dir or Path(tempfile.mkdtemp(prefix="sched-bench-"))
    log_dir.mkdir(parents=True, exist_ok=True)
    print(f"scheduler logs in {log_dir}", flush=True)
    byte_compile_python_schedulers()
    records: list[RunRecord] = []
    errors: list[dict[str, Any]] = []
    plan = itertools.product(
        range(args.repeat), args.modes, args.loads, args.workloads, _kinds(args.schedulers)
    )
    try:
        for repeat, mode, load, workload, kind in plan:
            shape = SHAPES[workload]
            pods = shape.measured_pod_count(args.nodes, args.pods)
            if pods < 1:
                raise SystemExit(f"--nodes {args.nodes} leaves no room for {shape.name}")
            spec = RunSpec(
                shape=shape,
                nodes=args.nodes,
                pods=pods,
                percentage=MODES[mode],
                threads=args.threads,
                leader_elect=args.leader_elect,
                timeout_s=args.timeout,
                log_dir=log_dir / f"{mode}-{load}-{workload}-{repeat}",
            )
            spec.log_dir.mkdir(parents=True, exist_ok=True)
            where = f"{mode}/{load}/{shape.name}/{kind.label} #{repeat + 1}"
            print(f"== {where}: {args.nodes} nodes, {pods} pods", flush=True)
            began = time.monotonic()
            try:
                figures = _run(kind, binaries, spec, load, args.rate)
            except Exception as err:  # report it, run the rest
                errors.append({"run": where, "error": str(err)})
                print(f"[{kind.label}] FAILED: {err}", file=sys.stderr, flush=True)
                continue
            records.append(
                RunRecord(mode, load, shape.name, kind.label, repeat, args.nodes, pods, figures)
            )
            print(f"== {where} done in {time.monotonic() - began:.0f} s", flush=True)
    except KeyboardInterrupt:
        # The run under way was torn down on the way out; what finished is still worth a table.
        errors.append({"run": "the rest", "error": "interrupted"})
        print("\ninterrupted: reporting the runs that finished", flush=True)
    print(f"\n{args.nodes} nodes, up to {args.pods} measured pods, {args.repeat} repeat(s)")
    for load in LOADS:
        table = format_table(records, load)
        if table:
            title = "drain" if load == DRAIN else f"churn at {args.rate:g} pods/s"
            print(f"\n{title} (medians; 'x up' = median ratio to kube-scheduler)\n{table}")
    for error in errors:
        print(f"FAILED {error['run']}: {error['error'].splitlines()[0]}")
    if args.json:
        document = {
            "version": "v2",
            "arguments": {k: str(v) if isinstance(v, Path) else v for k, v in vars(args).items()},
            "runs": [asdict(r) for r in records],
            "summary": summary_document(records),
            "errors": errors,
        }
        args.json.write_text(json.dumps(document, indent=2) + "\n")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
