"""One benchmark run: a fresh etcd + kube-apiserver, a workload, one scheduler, its figures.

Drain load: nodes, setup pods and every measured pod exist before the scheduler starts; the
run times from its start to the last pod bound (throughput as scheduler_perf samples it).

Churn load: nodes and setup pods exist; the scheduler starts and binds one warm-up pod (so
that its start-up is not counted), then the measured pods are created at a fixed rate while it
schedules; the run ends when every one is bound.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from bench.compare_churn import BacklogSample
from bench.compare_churn import Pacer
from bench.compare_churn import churn_figures
from bench.compare_poster import KeepAlivePoster
from bench.compare_procstat import cpu_seconds
from bench.compare_procstat import peak_rss_bytes
from bench.compare_schedulers import SchedulerKind
from bench.compare_schedulers import SchedulerProcess
from bench.compare_shapes import BASIC
from bench.compare_shapes import NAMESPACE
from bench.compare_shapes import WorkloadShape
from bench.compare_summary import Figures
from bench.compare_watch import BoundPodCounter
from bench.compare_watch import percentile
from bench.compare_watch import sample_until_all_bound
from bench.compare_workload import Poster
from bench.compare_workload import create_cluster
from bench.compare_workload import create_object
from bench.compare_workload import create_workload
from bench.compare_workload import pods_path
from tests.e2e.binaries import ControlPlaneBinaries
from tests.e2e.controlplane import ControlPlane

MIB = 1024 * 1024
WARM_UP_POD = "warm-up"
WARM_UP_TIMEOUT_S = 120.0
BACKLOG_SAMPLE_S = 0.5


@dataclass(frozen=True)
class RunSpec:
    """What one run does, apart from which scheduler runs it."""

    shape: WorkloadShape
    nodes: int
    pods: int
    # percentageOfNodesToScore for both schedulers; None leaves each at its default.
    percentage: int | None
    threads: int
    # Both schedulers elect a leader (alone, so each takes a fresh Lease as it starts).
    leader_elect: bool
    timeout_s: float
    log_dir: Path


class _Running:
    """A scheduler started on a control plane, with the watch that counts its bindings."""

    def __init__(self, plane: ControlPlane, counter: BoundPodCounter, scheduler: SchedulerProcess):
        self.plane = plane
        self.counter = counter
        self.scheduler = scheduler
        self.started = 0.0
        apiserver, etcd = plane._apiserver, plane._etcd
        # The harness exposes no pids; the benchmark only reads them to report their CPU time.
        pids = [process.pid for process in (apiserver, etcd) if process is not None]
        self._pids = [pid for pid in pids if pid is not None]
        self._cpu0 = [cpu_seconds(pid) for pid in self._pids]
        self._scheduler_cpu0 = 0.0

    def restart_cpu_count(self) -> None:
        """Count CPU from now on only (the churn load leaves start-up and warm-up out)."""
        self._scheduler_cpu0 = cpu_seconds(self.scheduler.pid)
        self._cpu0 = [cpu_seconds(pid) for pid in self._pids]

    def resource_figures(self, pods: int) -> Figures:
        """CPU and memory of the scheduler (and the control plane's CPU) so far."""
        self.scheduler.require_running()
        cpu_s = cpu_seconds(self.scheduler.pid) - self._scheduler_cpu0
        plane_cpu = [cpu_seconds(pid) - c0 for pid, c0 in zip(self._pids, self._cpu0, strict=True)]
        return {
            "cpu_s": cpu_s,
            "cpu_ms_per_pod": 1000.0 * cpu_s / pods,
            "peak_rss_mib": peak_rss_bytes(self.scheduler.pid) / MIB,
            "control_plane_cpu_s": sum(plane_cpu),
        }

    def wait_all_bound(self, total: int, timeout_s: float) -> list[float]:
        try:
            return sample_until_all_bound(
                self.counter,
                total,
                self.started,
                timeout_s=timeout_s,
                still_running=self.scheduler.require_running,
            )
        except TimeoutError as err:
            scheduler = self.scheduler
            raise RuntimeError(f"{scheduler.kind.label}: {err}\n{scheduler.log_tail()}") from err


@contextmanager
def _scheduler_on_fresh_cluster(
    kind: SchedulerKind,
    binaries: ControlPlaneBinaries,
    spec: RunSpec,
    create_before_start: Callable[[Poster], None],
) -> Iterator[_Running]:
    """A control plane holding what `create_before_start` made, a watch on the measured
    namespace and the scheduler, started; all of it stopped on the way out."""
    print(f"[{kind.label}] starting etcd + kube-apiserver", flush=True)
    with ControlPlane(binaries) as plane:
        create_before_start(_poster(plane))
        counter = BoundPodCounter(plane.admin_client(), NAMESPACE)
        counter.start()
        if counter.bound():
            raise RuntimeError(f"{counter.bound()} pods were bound before any scheduler ran")
        scheduler = SchedulerProcess(
            kind,
            binaries.kube_scheduler,
            plane.kubeconfig_path,
            spec.log_dir,
            percentage=spec.percentage,
            leader_elect=spec.leader_elect,
        )
        running = _Running(plane, counter, scheduler)
        try:
            running.started = scheduler.start()
            print(f"[{kind.label}] scheduler pid {scheduler.pid}: {' '.join(scheduler.argv)}")
            yield running
        finally:
            counter.stop()
            scheduler.stop()
            # Nothing of the cluster outlives the run, and the API server's graceful shutdown
            # takes half a minute here: every run would pay for it.
            if plane._apiserver is not None:
                plane._apiserver.kill()


def _poster(plane: ControlPlane) -> KeepAlivePoster:
    return KeepAlivePoster(plane.server_url, plane.ca_path, plane.admin_cert_paths)


def run_drain(kind: SchedulerKind, binaries: ControlPlaneBinaries, spec: RunSpec) -> Figures:
    def create(client: Poster) -> None:
        seconds = create_workload(
            client, spec.shape, spec.nodes, spec.pods, kind.scheduler_name, threads=spec.threads
        )
        print(f"[{kind.label}] created the workload in {seconds:.1f} s")

    with _scheduler_on_fresh_cluster(kind, binaries, spec, create) as running:
        samples = running.wait_all_bound(spec.pods, spec.timeout_s)
        figures = running.resource_figures(spec.pods)
        first, last = running.counter.bound_times()
    if first is None or last is None:
        raise RuntimeError(f"{kind.label}: the watch saw no binding")
    wall_s = last - running.started
    return {
        "throughput": spec.pods / wall_s,
        "wall_s": wall_s,
        "first_bind_s": first - running.started,
        # Start-up left out: the rate once binding has begun.
        "bound_per_s_after_first": (spec.pods - 1) / (last - first) if last > first else 0.0,
        "sample_p50": percentile(samples, 50),
        "sample_p99": percentile(samples, 99),
        **figures,
    }


def run_churn(
    kind: SchedulerKind, binaries: ControlPlaneBinaries, spec: RunSpec, rate: float
) -> Figures:
    def create(client: Poster) -> None:
        create_cluster(client, spec.shape, spec.nodes, kind.scheduler_name, threads=spec.threads)

    with _scheduler_on_fresh_cluster(kind, binaries, spec, create) as running:
        client = _poster(running.plane)
        warm_up = BASIC.measured_pod(0, kind.scheduler_name)
        warm_up["metadata"]["name"] = WARM_UP_POD
        create_object(client, pods_path(NAMESPACE), warm_up)
        running.wait_all_bound(1, WARM_UP_TIMEOUT_S)
        running.restart_cpu_count()
        samples, creation_s, churn_started = _create_at_rate(running, client, spec, kind, rate)
        figures = running.resource_figures(spec.pods)
        _, last = running.counter.bound_times()
        latencies = [
            seconds for name, seconds in running.counter.latencies().items() if name != WARM_UP_POD
        ]
    if last is None:
        raise RuntimeError(f"{kind.label}: the watch saw no binding")
    return {
        **churn_figures(
            rate,
            spec.pods,
            latencies,
            samples,
            creation_s=creation_s,
            last_bound_s=last - churn_started,
        ),
        # Pods the watch saw bound without first seeing them pending (after a re-list) have no
        # latency; this says how many did.
        "latency_pods": float(len(latencies)),
        **figures,
    }


def _create_at_rate(
    running: _Running, client: Poster, spec: RunSpec, kind: SchedulerKind, rate: float
) -> tuple[list[BacklogSample], float, float]:
    """Creates the measured pods at `rate` while a second thread samples the backlog; returns
    the samples, the seconds creation took and the monotonic time it began."""
    counter = running.counter
    samples: list[BacklogSample] = []
    done = threading.Event()

    def sample() -> None:
        while not done.wait(BACKLOG_SAMPLE_S):
            samples.append(BacklogSample(counter.seen_pending(), counter.bound()))

    path = pods_path(NAMESPACE)
    sampler = threading.Thread(target=sample, name="backlog-sampler", daemon=True)
    print(f"[{kind.label}] creating {spec.pods} pods at {rate:g}/s", flush=True)
    started = time.monotonic()
    sampler.start()
    with ThreadPoolExecutor(max_workers=spec.threads) as pool:
        futures = []

        def emit(index: int) -> None:
            pod = spec.shape.measured_pod(index, kind.scheduler_name)
            futures.append(pool.submit(create_object, client, path, pod))

        Pacer(rate, spec.pods).run(emit)
        for future in futures:
            future.result()
    creation_s = time.monotonic() - started
    # Keep sampling until the backlog created at the end has drained.
    running.wait_all_bound(spec.pods + 1, spec.timeout_s)
    done.set()
    sampler.join()
    samples.append(BacklogSample(counter.seen_pending(), counter.bound()))
    return samples, creation_s, started
