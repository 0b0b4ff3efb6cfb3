"""Side-by-side drain-mode benchmark: upstream kube-scheduler against kube-pyscheduler.

For each scheduler in turn, on a fresh etcd + kube-apiserver: create N nodes and M pods
(scheduler_perf SchedulingBasic shapes), then start the scheduler and time from its start to
the last pod bound. Throughput is sampled once a second from one pod watch, as scheduler_perf
does; CPU time and peak RSS come from /proc.

    python -m bench.compare [--nodes 500 --pods 2000] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from dataclasses import asdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.compare_procstat import cpu_seconds
from bench.compare_procstat import peak_rss_bytes
from bench.compare_schedulers import KINDS
from bench.compare_schedulers import OURS
from bench.compare_schedulers import UPSTREAM
from bench.compare_schedulers import SchedulerKind
from bench.compare_schedulers import SchedulerProcess
from bench.compare_watch import BoundPodCounter
from bench.compare_watch import percentile
from bench.compare_watch import sample_until_all_bound
from bench.compare_workload import NAMESPACE
from bench.compare_workload import create_workload
from tests.e2e.binaries import ControlPlaneBinaries
from tests.e2e.binaries import ensure_binaries
from tests.e2e.controlplane import ControlPlane

MIB = 1024 * 1024


@dataclass(frozen=True)
class RunResult:
    scheduler: str
    nodes: int
    pods: int
    create_s: float
    wall_s: float
    first_bind_s: float
    average_pods_per_s: float
    sample_average: float
    p50: float
    p90: float
    p99: float
    samples: int
    cpu_s: float
    pods_per_cpu_s: float
    cpu_ms_per_pod: float
    peak_rss_mib: float
    apiserver_cpu_s: float
    etcd_cpu_s: float


def _control_plane_pids(plane: ControlPlane) -> tuple[int | None, int | None]:
    # The harness exposes no pids; the benchmark only reads them to report their CPU time.
    apiserver, etcd = plane._apiserver, plane._etcd
    return (apiserver.pid if apiserver else None, etcd.pid if etcd else None)


def _cpu_or_zero(pid: int | None) -> float:
    return cpu_seconds(pid) if pid is not None else 0.0


def run_one(
    kind: SchedulerKind,
    binaries: ControlPlaneBinaries,
    nodes: int,
    pods: int,
    *,
    threads: int,
    timeout_s: float,
    log_dir: Path,
) -> RunResult:
    """One complete run on its own control plane; every process is stopped on the way out."""
    print(f"[{kind.label}] starting etcd + kube-apiserver", flush=True)
    with ControlPlane(binaries) as plane:
        client = plane.admin_client()
        create_s = create_workload(client, nodes, pods, kind.scheduler_name, threads=threads)
        print(f"[{kind.label}] created {nodes} nodes + {pods} pods in {create_s:.1f} s", flush=True)
        counter = BoundPodCounter(client, NAMESPACE)
        counter.start()
        if counter.bound():
            raise RuntimeError(f"{counter.bound()} pods were bound before any scheduler ran")
        apiserver_pid, etcd_pid = _control_plane_pids(plane)
        apiserver_cpu0, etcd_cpu0 = _cpu_or_zero(apiserver_pid), _cpu_or_zero(etcd_pid)
        scheduler = SchedulerProcess(kind, binaries.kube_scheduler, plane.kubeconfig_path, log_dir)
        try:
            started = scheduler.start()
            print(f"[{kind.label}] scheduler pid {scheduler.pid}: {' '.join(scheduler.argv)}")
            try:
                samples = sample_until_all_bound(
                    counter,
                    pods,
                    started,
                    timeout_s=timeout_s,
                    still_running=scheduler.require_running,
                )
            except TimeoutError as err:
                raise RuntimeError(f"{kind.label}: {err}\n{scheduler.log_tail()}") from err
            scheduler.require_running()
            cpu_s = cpu_seconds(scheduler.pid)
            rss = peak_rss_bytes(scheduler.pid)
            apiserver_cpu = _cpu_or_zero(apiserver_pid) - apiserver_cpu0
            etcd_cpu = _cpu_or_zero(etcd_pid) - etcd_cpu0
        finally:
            counter.stop()
            scheduler.stop()
    first, last = counter.bound_times()
    if first is None or last is None:
        raise RuntimeError(f"{kind.label}: the watch saw no binding")
    wall_s = last - started
    return RunResult(
        scheduler=kind.label,
        nodes=nodes,
        pods=pods,
        create_s=create_s,
        wall_s=wall_s,
        first_bind_s=first - started,
        average_pods_per_s=pods / wall_s,
        sample_average=sum(samples) / len(samples) if samples else 0.0,
        p50=percentile(samples, 50),
        p90=percentile(samples, 90),
        p99=percentile(samples, 99),
        samples=len(samples),
        cpu_s=cpu_s,
        pods_per_cpu_s=pods / cpu_s if cpu_s else float("inf"),
        cpu_ms_per_pod=1000.0 * cpu_s / pods,
        peak_rss_mib=rss / MIB,
        apiserver_cpu_s=apiserver_cpu,
        etcd_cpu_s=etcd_cpu,
    )


def ratios(ours: RunResult, upstream: RunResult) -> dict[str, float]:
    """ours / upstream: above 1 means ours is faster (throughput) or costlier (CPU, RSS)."""
    return {
        "throughput": ours.average_pods_per_s / upstream.average_pods_per_s,
        "cpu_per_pod": ours.cpu_ms_per_pod / upstream.cpu_ms_per_pod,
        "peak_rss": ours.peak_rss_mib / upstream.peak_rss_mib,
    }


def format_table(results: list[RunResult]) -> str:
    header = (
        f"{'scheduler':<17}{'pods/s':>8}{'p50':>8}{'p90':>8}{'p99':>8}{'wall s':>8}"
        f"{'1st bind s':>11}{'CPU s':>8}{'pods/CPUs':>10}{'CPU ms/pod':>11}{'RSS MiB':>9}"
        f"{'apisrv CPU':>11}{'etcd CPU':>9}"
    )
    rows = [header]
    for r in results:
        rows.append(
            f"{r.scheduler:<17}{r.average_pods_per_s:>8.1f}{r.p50:>8.1f}{r.p90:>8.1f}"
            f"{r.p99:>8.1f}{r.wall_s:>8.2f}{r.first_bind_s:>11.2f}{r.cpu_s:>8.2f}"
            f"{r.pods_per_cpu_s:>10.1f}{r.cpu_ms_per_pod:>11.2f}{r.peak_rss_mib:>9.1f}"
            f"{r.apiserver_cpu_s:>11.2f}{r.etcd_cpu_s:>9.2f}"
        )
    return "\n".join(rows)


def data_items(results: list[RunResult]) -> list[dict[str, Any]]:
    """The throughput in scheduler_perf's DataItem shape."""
    return [
        {
            "data": {
                "Average": r.sample_average,
                "Perc50": r.p50,
                "Perc90": r.p90,
                "Perc99": r.p99,
            },
            "unit": "pods/s",
            "labels": {
                "Metric": "SchedulingThroughput",
                "Name": f"SchedulingBasic/{r.nodes}Nodes/{r.pods}Pods",
                "Scheduler": r.scheduler,
            },
        }
        for r in results
    ]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.compare", description=__doc__)
    parser.add_argument("--nodes", type=int, default=500)
    parser.add_argument("--pods", type=int, default=2000)
    parser.add_argument("--threads", type=int, default=16, help="object-creation threads")
    parser.add_argument(
        "--timeout", type=float, default=900.0, help="seconds per scheduler to bind every pod"
    )
    parser.add_argument(
        "--only", choices=(UPSTREAM, OURS), help="run just one of the two schedulers"
    )
    parser.add_argument("--json", type=Path, help="write the results to this file")
    parser.add_argument("--log-dir", type=Path, help="where scheduler logs go (kept)")
    args = parser.parse_args(argv)
    if args.nodes < 1 or args.pods < 1:
        parser.error("--nodes and --pods must be positive")
    if args.pods > args.nodes * 110:
        parser.error("more pods than the nodes can hold (110 per node)")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    binaries = ensure_binaries()
    log_dir = args.log_dir or Path(tempfile.mkdtemp(prefix="sched-bench-"))
    log_dir.mkdir(parents=True, exist_ok=True)
    print(f"scheduler logs in {log_dir}", flush=True)
    results: list[RunResult] = []
    errors: dict[str, str] = {}
    for kind in KINDS:
        if args.only and kind.label != args.only:
            continue
        run_started = time.monotonic()
        try:
            result = run_one(
                kind,
                binaries,
                args.nodes,
                args.pods,
                threads=args.threads,
                timeout_s=args.timeout,
                log_dir=log_dir,
            )
        except Exception as err:  # report it, still run the other scheduler
            errors[kind.label] = str(err)
            print(f"[{kind.label}] FAILED: {err}", file=sys.stderr, flush=True)
            continue
        results.append(result)
        print(f"[{kind.label}] done in {time.monotonic() - run_started:.0f} s", flush=True)
    print(f"\nSchedulingBasic drain mode: {args.nodes} nodes, {args.pods} pods")
    print(format_table(results))
    by_label = {r.scheduler: r for r in results}
    summary: dict[str, float] | None = None
    if OURS in by_label and UPSTREAM in by_label:
        summary = ratios(by_label[OURS], by_label[UPSTREAM])
        print(
            "ratios ours/upstream: "
            + ", ".join(f"{name} {value:.3f}" for name, value in summary.items())
        )
    if args.json:
        document = {
            "version": "v1",
            "dataItems": data_items(results),
            "runs": [asdict(r) for r in results],
            "ratios": summary,
            "errors": errors,
        }
        args.json.write_text(json.dumps(document, indent=2) + "\n")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
