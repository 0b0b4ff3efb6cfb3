"""The chaos run: a packed cluster, a burst of pods, two scheduler replicas, and strikes.

On a fresh control plane with an audit log: N nodes that each fit exactly K pods, two replicas
of one scheduler (ours or upstream kube-scheduler, same configuration) with leader election,
then every pod created in one burst. While they are scheduled the Lease holder is SIGKILLed
`kills` times and the apiserver restarted once; killed or exited replicas are started again at
once, as a Deployment would. Strikes fall at even steps of the bound-pod count, each on a holder
that took the Lease after the previous strike. The run ends when every pod is bound, or when
nothing has been bound for `quiet_s` after the last strike.

Everything judged is read from the apiserver: the final pod list (capacity), its audit log
(bindings and Lease tenures, see tenure.py) and the Events. A pod bound by a replica in the last
second before that replica was SIGKILLed may lack its Scheduled Event; so may one bound in the
last second before the apiserver stopped (the stop cuts its binder off the same way). Both are
counted and printed apart.

    python -m tests.e2e.chaos --scheduler ours|upstream [--nodes 200] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import threading
import time
from dataclasses import asdict
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

from tests.e2e.api_client import ApiClient
from tests.e2e.audit import AuditLog
from tests.e2e.audit import AuditRecord
from tests.e2e.binaries import ControlPlaneBinaries
from tests.e2e.binaries import ensure_binaries
from tests.e2e.bound_pods import BoundPods
from tests.e2e.controlplane import ControlPlane
from tests.e2e.packed_cluster import PackedShape
from tests.e2e.packed_cluster import bound_names
from tests.e2e.packed_cluster import create_all
from tests.e2e.packed_cluster import occurrences
from tests.e2e.packed_cluster import overcommitted
from tests.e2e.replicas import FLAVOURS
from tests.e2e.replicas import OURS
from tests.e2e.replicas import ElectionTimings
from tests.e2e.replicas import Replicas
from tests.e2e.replicas import ReplicaSpec
from tests.e2e.tenure import LeaseTimeline
from tests.e2e.tenure import lease_timeline

NAMESPACE = "chaos"
LEASE_NAME = "chaos-scheduler"
SCHEDULER_NAME = "chaos-scheduler"
EVENTS = f"/apis/events.k8s.io/v1/namespaces/{NAMESPACE}/events"
PODS = f"/api/v1/namespaces/{NAMESPACE}/pods"
# Beyond leaseDuration + retryPeriod, what a takeover may take on a loaded 2-core machine: the
# standby's Get that finds the Lease expired and its Update are each a request to a server busy
# with a burst, and the standby's own event loop is busy too.
FAILOVER_SLACK_S = 3.0
# A SIGKILL may catch a binding whose Event is not yet written; only the last second counts.
EVENT_GRACE_S = 1.0
POLL_S = 0.1
LEADER_TIMEOUT_S = 90.0
EVENTS_TIMEOUT_S = 30.0
APISERVER_RESTART_GRACE_S = 5.0
# A replica that keeps dying is a broken set-up, not chaos: stop instead of restarting forever.
MAX_INCARNATIONS = 30


@dataclass(frozen=True)
class ChaosPlan:
    flavour: str = OURS
    shape: PackedShape = field(default_factory=PackedShape)
    kills: int = 2
    apiserver_restart: bool = True
    timings: ElectionTimings = field(default_factory=ElectionTimings)
    timeout_s: float = 300.0
    quiet_s: float = 30.0

    @property
    def strikes(self) -> list[str]:
        return ["kill"] * self.kills + (["restart"] if self.apiserver_restart else [])

    @property
    def failover_bound_s(self) -> float:
        return self.timings.lease_duration_s + self.timings.retry_period_s + FAILOVER_SLACK_S


@dataclass
class ChaosReport:
    scheduler: str
    nodes: int
    pods: int
    pods_bound: int = 0
    overcommitted_nodes: int = 0
    bindings: int = 0
    bindings_unanswered: int = 0
    bindings_refused: int = 0
    bound_without_binding: int = 0
    bindings_outside_tenure: int = 0
    bindings_received_outside_tenure: int = 0
    tenures: int = 0
    early_takeovers: int = 0
    kills: int = 0
    failover_s: list[float | None] = field(default_factory=list)
    apiserver_restarts: int = 0
    apiserver_restart_s: float | None = None
    scheduled_missing: int = 0
    scheduled_duplicate: int = 0
    scheduled_excepted: int = 0
    scheduled_excepted_outage: int = 0
    wall_s: float = 0.0
    exits: dict[str, int] = field(default_factory=dict)
    offenders: list[str] = field(default_factory=list)

    def format(self) -> str:
        failovers = ", ".join("none" if s is None else f"{s:.2f} s" for s in self.failover_s)
        restart = "-" if self.apiserver_restart_s is None else f"{self.apiserver_restart_s:.1f} s"
        rows = [
            ("scheduler", self.scheduler),
            ("nodes / pods", f"{self.nodes} / {self.pods}"),
            ("pods bound", self.pods_bound),
            ("over-capacity nodes", self.overcommitted_nodes),
            ("bindings (2xx)", self.bindings),
            ("bindings answered 5xx / not at all", self.bindings_unanswered),
            ("bindings refused (4xx)", self.bindings_refused),
            ("bound pods with no binding logged", self.bound_without_binding),
            ("bindings outside tenure", self.bindings_outside_tenure),
            ("  of which sent outside tenure", self.bindings_received_outside_tenure),
            ("lease tenures until the last bind", self.tenures),
            ("early takeovers", self.early_takeovers),
            ("holder SIGKILLs", self.kills),
            ("failover (kill -> new holder)", failovers or "-"),
            ("apiserver restarts", f"{self.apiserver_restarts} ({restart})"),
            ("Scheduled events missing", self.scheduled_missing),
            ("Scheduled events duplicate", self.scheduled_duplicate),
            ("excepted (bound <1 s before a kill)", self.scheduled_excepted),
            ("excepted (<1 s before the outage)", self.scheduled_excepted_outage),
            ("wall time (burst -> last bind)", f"{self.wall_s:.1f} s"),
            ("replica exits", " ".join(f"{u}={c}" for u, c in self.exits.items()) or "-"),
        ]
        text = "\n".join(f"  {name:<38}{value}" for name, value in rows)
        return text + "".join(f"\n  ! {line}" for line in self.offenders)


def violations(plan: ChaosPlan, report: ChaosReport) -> list[str]:
    """What the run did wrong, one line each; empty when it held every property."""
    found = []
    if report.pods_bound != report.pods:
        found.append(f"only {report.pods_bound} of {report.pods} pods bound")
    if report.overcommitted_nodes:
        found.append(f"{report.overcommitted_nodes} nodes over capacity")
    if report.bound_without_binding:
        found.append(f"{report.bound_without_binding} bound pods have no binding in the audit log")
    if report.bindings_outside_tenure:
        found.append(f"{report.bindings_outside_tenure} bindings outside their author's tenure")
    if report.early_takeovers:
        found.append(f"{report.early_takeovers} takeovers before the Lease had expired")
    if report.scheduled_missing or report.scheduled_duplicate:
        found.append(
            f"Scheduled events: {report.scheduled_missing} pods without, "
            f"{report.scheduled_duplicate} with more than one"
        )
    if report.kills != plan.kills or report.apiserver_restarts != int(plan.apiserver_restart):
        found.append(
            f"strikes: {report.kills} kills and {report.apiserver_restarts} apiserver restarts "
            "happened before the pods were all bound"
        )
    late = [s for s in report.failover_s if s is None or s > plan.failover_bound_s]
    if late:
        found.append(f"failovers over {plan.failover_bound_s:g} s: {late}")
    if not plan.strikes and report.tenures != 1:
        found.append(f"{report.tenures} tenures where one leader should hold throughout")
    return found


@dataclass(frozen=True)
class _Kill:
    user: str
    at: float


class _Run:
    """One run's moving parts on an already started control plane."""

    def __init__(
        self, plan: ChaosPlan, plane: ControlPlane, binaries: ControlPlaneBinaries, log_dir: Path
    ) -> None:
        self.plan = plan
        self.plane = plane
        self.admin: ApiClient = plane.admin_client()
        self.audit: AuditLog = plane.audit_log()
        spec = ReplicaSpec(plan.flavour, SCHEDULER_NAME, NAMESPACE, LEASE_NAME, plan.timings)
        self.replicas = Replicas(spec, plane, binaries, log_dir)
        self.report = ChaosReport(plan.flavour, plan.shape.nodes, plan.shape.pods)
        self.kills: list[_Kill] = []
        self.burst_error: BaseException | None = None
        self.outage_at: float | None = None

    def timeline(self) -> LeaseTimeline:
        return lease_timeline(self.audit.records(), NAMESPACE, LEASE_NAME)

    def keep_replicas(self) -> None:
        self.replicas.ensure_running()
        if len(self.replicas.incarnations) > MAX_INCARNATIONS:
            raise RuntimeError(
                f"{len(self.replicas.incarnations)} replicas started: they keep exiting\n"
                + self.replicas.logs_tail()
            )

    def holder_since(self, since: float) -> str | None:
        """The user holding the Lease now, if it took the Lease after `since` and runs."""
        tenures = self.timeline().tenures
        if not tenures:
            return None
        last = tenures[-1]
        process = self.replicas.incarnations.get(last.user)
        running = process is not None and process.running()
        fresh = last.start > since and not last.released and last.end > time.time()
        return last.user if running and fresh else None

    def prepare(self) -> None:
        namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}}
        create_all(self.admin, "/api/v1/namespaces", [namespace])
        shape = self.plan.shape
        create_all(
            self.admin, "/api/v1/nodes", [shape.node_manifest(i) for i in range(shape.nodes)]
        )
        deadline = time.monotonic() + LEADER_TIMEOUT_S
        while self.holder_since(0.0) is None:
            self.keep_replicas()
            if time.monotonic() > deadline:
                raise RuntimeError(f"no replica took the Lease\n{self.replicas.logs_tail()}")
            time.sleep(POLL_S)

    def burst(self) -> None:
        shape = self.plan.shape
        pods = [shape.pod_manifest(i, NAMESPACE, SCHEDULER_NAME) for i in range(shape.pods)]
        try:
            create_all(self.admin, PODS, pods)
        except BaseException as err:  # handed to the driving thread
            self.burst_error = err

    def drive(self, bound: BoundPods) -> None:
        """Creates the burst, strikes on schedule, and returns once scheduling has settled."""
        plan, total = self.plan, self.plan.shape.pods
        strikes = plan.strikes
        thresholds = [(i + 1) * total // (len(strikes) + 2) for i in range(len(strikes))]
        creator = threading.Thread(target=self.burst, name="burst", daemon=True)
        started = time.monotonic()
        creator.start()
        restart: threading.Thread | None = None
        last_strike, done = 0.0, 0
        last_count, last_progress = 0, started
        while True:
            self.keep_replicas()
            now, count = time.monotonic(), bound.count()
            if count != last_count:
                last_count, last_progress = count, now
            restarting = restart is not None and restart.is_alive()
            if done < len(strikes) and count >= thresholds[done] and not restarting:
                holder = self.holder_since(last_strike)
                if holder is not None:
                    if strikes[done] == "kill":
                        self.kills.append(_Kill(holder, self.replicas.kill(holder)))
                    else:
                        restart = threading.Thread(target=self.restart_apiserver, daemon=True)
                        restart.start()
                    last_strike, done = time.time(), done + 1
            settled = done == len(strikes) and now - last_progress > plan.quiet_s
            if not restarting and (count >= total or settled):
                break
            if now - started > plan.timeout_s:
                break
            if self.burst_error is not None:
                raise RuntimeError(f"creating the burst failed: {self.burst_error}")
            time.sleep(POLL_S)
        if restart is not None:
            restart.join()
        creator.join()
        self.report.wall_s = last_progress - started

    def restart_apiserver(self) -> None:
        began = time.monotonic()
        self.outage_at = time.time()
        self.plane.restart_apiserver(grace_s=APISERVER_RESTART_GRACE_S)
        self.report.apiserver_restart_s = time.monotonic() - began
        self.report.apiserver_restarts += 1

    def killed_candidates(self, bindings: list[AuditRecord]) -> set[str]:
        """Pods bound by a killed replica in the last second before its SIGKILL, or by a
        request it sent before that the server completed after."""
        return {b.name for kill in self.kills for b in _cut_off(bindings, kill.user, kill.at)}

    def outage_candidates(self, bindings: list[AuditRecord]) -> set[str]:
        """Pods bound in the last second before the apiserver stopped, or while it was
        stopping: like a SIGKILL, the stop can cut the binder off between the Binding and its
        Event (an answer lost to the stop leaves it believing the Binding failed; a binder that
        loses the Lease during the outage exits with its Events unsent)."""
        if self.outage_at is None:
            return set()
        # The stopping server serves what it has in hand for the grace period at most.
        began, ended = self.outage_at, self.outage_at + APISERVER_RESTART_GRACE_S
        return {
            b.name
            for b in bindings
            if b.received_at <= ended and b.completed_at >= began - EVENT_GRACE_S
        }

    def missing_by_binder(self, missing: set[str], bindings: list[AuditRecord]) -> list[str]:
        """One line per replica whose pods lack their Events, with how long before its SIGKILL
        (if it was killed) it bound them."""
        binder = {b.name: b for b in bindings}
        completed: dict[str, list[float]] = {}
        for pod in missing:
            record = binder[pod]
            completed.setdefault(record.user, []).append(record.completed_at)
        killed_at = {kill.user: kill.at for kill in self.kills}
        lines = []
        for user, times in sorted(completed.items()):
            at = killed_at.get(user)
            ages = None if at is None else [at - t for t in times]
            lines.append(_describe_missing(len(times), user, ages))
        return lines

    def wait_for_events(self, bound: set[str], excused: set[str]) -> None:
        """Polls until every bound pod not excused has its Scheduled Event, or the deadline."""
        deadline = time.monotonic() + EVENTS_TIMEOUT_S
        while time.monotonic() < deadline:
            self.keep_replicas()
            scheduled = occurrences(self.list_items(EVENTS), "Scheduled")
            if not bound - excused - scheduled.keys():
                return
            time.sleep(1.0)  # a poll interval: each poll lists thousands of Events

    def list_items(self, path: str) -> list[dict[str, Any]]:
        listed = self.admin.get(path)
        if listed.status != 200:
            raise RuntimeError(f"listing {path}: {listed}")
        items: list[dict[str, Any]] = listed.body["items"]
        return items

    def judge(self) -> None:
        """Fills the report from the final pod list, the Events and the audit log."""
        report, shape = self.report, self.plan.shape
        pods = self.list_items(PODS)
        bound = bound_names(pods)
        report.pods_bound = len(bound)
        over = overcommitted(shape, pods)
        report.overcommitted_nodes = len(over)
        report.offenders += [f"over capacity: {o}" for o in over[:5]]
        records = self.audit.records()
        bindings = [r for r in records if r.is_binding and r.namespace == NAMESPACE]
        accepted = [b for b in bindings if b.succeeded]
        # A server error or a client gone mid-request (a SIGKILL) may still have bound the
        # pod: such an attempt is judged too when the pod has no accepted binding.
        unanswered = [b for b in bindings if b.code >= 500 or b.code == 0]
        accepted_pods = {b.name for b in accepted}
        effective = accepted + [b for b in unanswered if b.name in bound - accepted_pods]
        report.bindings = len(accepted)
        report.bindings_unanswered = len(unanswered)
        report.bindings_refused = len(bindings) - len(accepted) - len(unanswered)
        report.bound_without_binding = len(bound - {b.name for b in effective})
        timeline = lease_timeline(records, NAMESPACE, LEASE_NAME)
        outside = timeline.outside(effective)
        report.bindings_outside_tenure = len(outside)
        report.bindings_received_outside_tenure = len(timeline.received_outside(effective))
        report.offenders += [f"outside tenure: {b.user} bound {b.name}" for b in outside[:5]]
        # Tenures that began after the last binding are the hand-over while the replicas are
        # stopped at the end (a graceful stop releases the Lease and the other replica takes
        # it); they are not leader changes during the burst.
        last_bind = max((b.received_at for b in effective), default=float("inf"))
        report.tenures = sum(1 for t in timeline.tenures if t.start <= last_bind)
        early = [a for a in timeline.acquisitions if a.early]
        report.early_takeovers = len(early)
        report.offenders += [
            f"early takeover: {a.user} from {a.previous_user} after {a.gap_s:.2f} s" for a in early
        ]
        report.kills = len(self.kills)
        for kill in self.kills:
            after = [a for a in timeline.acquisitions if a.at > kill.at and a.user != kill.user]
            report.failover_s.append(after[0].at - kill.at if after else None)
        scheduled = occurrences(self.list_items(EVENTS), "Scheduled")
        killed, outage = self.killed_candidates(bindings), self.outage_candidates(bindings)
        candidates = killed | outage
        missing = bound - scheduled.keys()
        report.scheduled_excepted = len(missing & killed)
        report.scheduled_excepted_outage = len(missing & outage - killed)
        report.scheduled_missing = len(missing - candidates)
        report.scheduled_duplicate = sum(1 for pod in bound if scheduled.get(pod, 0) > 1)
        report.offenders += self.missing_by_binder(missing - candidates, effective)
        report.exits = dict(self.replicas.exits)


def _describe_missing(pods: int, user: str, ages: list[float] | None) -> str:
    where = f"{pods} pods bound by {user} have no Scheduled event"
    if ages is None:
        return where
    return f"{where}; bound {min(ages):.1f} to {max(ages):.1f} s before its SIGKILL"


def _cut_off(bindings: list[AuditRecord], user: str, at: float) -> list[AuditRecord]:
    """The bindings by `user`, killed at `at`, completed no more than a second before it. (The
    server may read a request after its sender died: whatever it got, it got before.)"""
    return [b for b in bindings if b.user == user and b.completed_at >= at - EVENT_GRACE_S]


def run_chaos(plan: ChaosPlan, binaries: ControlPlaneBinaries, log_dir: Path) -> ChaosReport:
    """One complete run on its own control plane; every process is stopped on the way out."""
    with ControlPlane(binaries, audit=True) as plane:
        run = _Run(plan, plane, binaries, log_dir)
        try:
            run.prepare()
            with BoundPods(run.admin, NAMESPACE) as bound:
                run.drive(bound)
            pods = run.list_items(PODS)
            bindings = [r for r in run.audit.records() if r.is_binding]
            excused = run.killed_candidates(bindings) | run.outage_candidates(bindings)
            run.wait_for_events(bound_names(pods), excused)
        finally:
            # SIGTERM: each replica may finish its work and release the Lease.
            run.replicas.stop_all()
        run.judge()
        # Kept for a closer look: the plane's own directory goes with it.
        shutil.copy(plane.audit_log_path, log_dir / "audit.log")
        return run.report


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m tests.e2e.chaos", description=__doc__)
    parser.add_argument("--scheduler", choices=FLAVOURS, default=OURS)
    parser.add_argument("--nodes", type=int, default=200)
    parser.add_argument("--pods-per-node", type=int, default=12)
    parser.add_argument("--kills", type=int, default=2, help="SIGKILLs of the Lease holder")
    parser.add_argument(
        "--no-apiserver-restart", action="store_true", help="leave the apiserver alone"
    )
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--log-dir", type=Path, help="where scheduler logs go (kept)")
    parser.add_argument("--json", type=Path, help="write the reports to this file")
    args = parser.parse_args(argv)
    for name in ("nodes", "pods_per_node", "repeat"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.kills < 0:
        parser.error("--kills must not be negative")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    plan = ChaosPlan(
        flavour=args.scheduler,
        shape=PackedShape(nodes=args.nodes, pods_per_node=args.pods_per_node),
        kills=args.kills,
        apiserver_restart=not args.no_apiserver_restart,
    )
    binaries = ensure_binaries()
    log_root = args.log_dir or Path(tempfile.mkdtemp(prefix="chaos-"))
    print(f"scheduler logs in {log_root}", flush=True)
    reports, failed = [], False
    for attempt in range(1, args.repeat + 1):
        began = time.monotonic()
        report = run_chaos(plan, binaries, log_root / f"run-{attempt}")
        found = violations(plan, report)
        failed = failed or bool(found)
        print(f"\nrun {attempt} of {args.repeat} ({time.monotonic() - began:.0f} s in all)")
        print(report.format())
        print("  verdict: " + ("; ".join(found) if found else "every property held"), flush=True)
        reports.append({**asdict(report), "violations": found})
    if args.json:
        args.json.write_text(json.dumps(reports, indent=2) + "\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
