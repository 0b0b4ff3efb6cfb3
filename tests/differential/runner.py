"""The differential run: upstream kube-scheduler and kube-pyscheduler on one real apiserver,
fed the same seeded cases one after the other, every disagreement saved as a scenario file.

    python -m tests.differential.runner --cases 2000 [--seed 1] [--out DIR]
    python -m tests.differential.runner --replay DIR/scenario-1-17.json

Both schedulers run their default profile, DynamicResources included, with one feature gate
away from its default: DRADeviceTaintRules, so that cases may carry DeviceTaintRules (it
changes nothing for a case without one). The apiserver serves them (resource.k8s.io/v1beta2).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import tempfile
import time
from collections.abc import Iterable
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

from bench.compare_schedulers import KINDS
from bench.compare_schedulers import OURS
from bench.compare_schedulers import UPSTREAM
from bench.compare_schedulers import SchedulerProcess
from tests.differential.cases import Case
from tests.differential.cases import generate
from tests.differential.cases import storage_class
from tests.differential.devices import asks_by_resource
from tests.differential.placement import CaseRun
from tests.differential.placement import Observation
from tests.differential.upstream_log import upstream_top_is_unique
from tests.differential.verdicts import differences
from tests.differential.verdicts import upstream_fault
from tests.e2e.api_client import ApiClient
from tests.e2e.binaries import ControlPlaneBinaries
from tests.e2e.binaries import ensure_binaries
from tests.e2e.controlplane import ControlPlane

# Fields added to upstream's one profile; None compares the two default profiles as they are.
UPSTREAM_PROFILE: dict[str, Any] | None = None
# schedule_one.go logs every node's final score at -v=10; nothing else gets that verbose.
UPSTREAM_LOG_ARGS = ("--vmodule=schedule_one=10",)
GATES = ("--feature-gates=DRADeviceTaintRules=true",)
PLANE_FLAGS = ("--runtime-config=resource.k8s.io/v1beta2=true", *GATES)


@dataclass
class Outcome:
    index: int
    upstream: Observation
    ours: Observation
    node_compared: bool
    differences: list[str]


@dataclass
class Tally:
    cases: int = 0
    verdicts_agree: int = 0
    messages_agree: int = 0
    unschedulable: int = 0
    unique_top: int = 0
    nodes_agree: int = 0
    preemptions: int = 0
    preemptions_agree: int = 0
    device_cases: int = 0
    device_bound: int = 0
    by_resource_cases: int = 0
    by_resource_bound: int = 0
    taint_rule_cases: int = 0
    taint_rule_bound: int = 0
    # Cases where upstream fails in a way we do not copy (verdicts.UPSTREAM_FAULTS).
    upstream_faults: int = 0
    disagreements: list[Path] = field(default_factory=list)
    interrupted_at: int | None = None

    def add(self, outcome: Outcome, case: Case) -> None:
        up, ours = outcome.upstream, outcome.ours
        self.cases += 1
        if case.devices:
            self.device_cases += 1
            self.device_bound += up.verdict == "bound"
        if any(obj["kind"] == "DeviceTaintRule" for obj in case.devices):
            self.taint_rule_cases += 1
            self.taint_rule_bound += up.verdict == "bound"
        if asks_by_resource(case.devices, case.pending):
            self.by_resource_cases += 1
            self.by_resource_bound += up.verdict == "bound"
        self.verdicts_agree += up.verdict == ours.verdict
        self.messages_agree += up.message == ours.message
        self.unschedulable += up.verdict == "unschedulable"
        if outcome.node_compared and up.verdict == "bound":
            self.unique_top += 1
            self.nodes_agree += up.node == ours.node
        if up.nominated or ours.nominated or up.victims or ours.victims:
            self.preemptions += 1
            self.preemptions_agree += (up.nominated, up.victims) == (ours.nominated, ours.victims)

    def summary(self) -> str:
        def share(part: int, whole: int) -> str:
            return f"{part}/{whole} ({100.0 * part / whole:.1f}%)" if whole else "0/0"

        stopped = "" if self.interrupted_at is None else f" (stopped at {self.interrupted_at})"
        return "\n".join(
            [
                f"cases: {self.cases}{stopped}",
                f"verdicts agree: {share(self.verdicts_agree, self.cases)}",
                f"FailedScheduling texts agree: {share(self.messages_agree, self.cases)}",
                f"chosen node agrees where upstream's top is unique: "
                f"{share(self.nodes_agree, self.unique_top)}",
                f"preemption (nominee, victims) agree: "
                f"{share(self.preemptions_agree, self.preemptions)}",
                f"cases with a device claim: {self.device_cases} "
                f"({self.device_bound} bound by upstream)",
                f"... asking for devices by extended resource: {self.by_resource_cases} "
                f"({self.by_resource_bound} bound by upstream)",
                f"... with a DeviceTaintRule: {self.taint_rule_cases} "
                f"({self.taint_rule_bound} bound by upstream)",
                f"kube-scheduler faults not copied (verdicts.UPSTREAM_FAULTS): "
                f"{self.upstream_faults}",
                f"disagreements saved: {len(self.disagreements)}",
            ]
        )


class Schedulers:
    """Both schedulers running against one control plane."""

    def __init__(self, binaries: ControlPlaneBinaries, plane: ControlPlane, log_dir: Path):
        self.processes: dict[str, SchedulerProcess] = {}
        for kind in KINDS:
            upstream = kind.label == UPSTREAM
            self.processes[kind.label] = SchedulerProcess(
                kind,
                binaries.kube_scheduler,
                plane.kubeconfig_path,
                log_dir,
                profile=UPSTREAM_PROFILE if upstream else None,
                extra_args=(*GATES, *UPSTREAM_LOG_ARGS) if upstream else GATES,
            )

    def start(self) -> None:
        for process in self.processes.values():
            process.start()

    def stop(self) -> None:
        for process in self.processes.values():
            process.stop()

    def require_running(self) -> None:
        for process in self.processes.values():
            process.require_running()

    @property
    def upstream_log(self) -> Path:
        return self.processes[UPSTREAM].log_path


@contextmanager
def running(
    binaries: ControlPlaneBinaries, log_dir: Path
) -> Iterator[tuple[ApiClient, Schedulers]]:
    with ControlPlane(binaries, PLANE_FLAGS) as plane:
        client = plane.admin_client()
        created = client.post("/apis/storage.k8s.io/v1/storageclasses", storage_class())
        if created.status != 201:
            raise RuntimeError(f"creating the cases' StorageClass: {created}")
        schedulers = Schedulers(binaries, plane, log_dir)
        schedulers.start()
        try:
            yield client, schedulers
        finally:
            schedulers.stop()


def run_case(
    client: ApiClient, schedulers: Schedulers, case: Case, *, tag: str, index: int
) -> Outcome:
    observed: dict[str, Observation] = {}
    namespaces: dict[str, str] = {}
    for kind in KINDS:
        short = "up" if kind.label == UPSTREAM else "py"
        namespaces[kind.label] = namespace = f"diff-{tag}-{index}-{short}"
        observed[kind.label] = CaseRun(
            client,
            case,
            prefix=f"{tag}-{index}-{short}",
            namespace=namespace,
            scheduler_name=kind.scheduler_name,
        ).run()
        schedulers.require_running()
    upstream, ours = observed[UPSTREAM], observed[OURS]
    unique = upstream.verdict == "bound" and upstream_top_is_unique(
        schedulers.upstream_log, f"{namespaces[UPSTREAM]}/pending"
    )
    return Outcome(index, upstream, ours, unique, differences(upstream, ours, compare_node=unique))


def save_scenario(out_dir: Path, seed: int, case: Case, outcome: Outcome) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"scenario-{seed}-{outcome.index}.json"
    document = {
        "seed": seed,
        "index": outcome.index,
        "case": case.to_json(),
        "upstream": outcome.upstream.to_json(),
        "ours": outcome.ours.to_json(),
        "differences": outcome.differences,
    }
    path.write_text(json.dumps(document, indent=2) + "\n")
    return path


def run_cases(
    binaries: ControlPlaneBinaries,
    cases: Iterable[tuple[int, Case]],
    *,
    seed: int,
    out_dir: Path,
    log_dir: Path,
    echo: bool = True,
) -> Tally:
    tally = Tally()
    log_dir.mkdir(parents=True, exist_ok=True)
    with running(binaries, log_dir) as (client, schedulers):
        for index, case in cases:
            try:
                outcome = run_case(client, schedulers, case, tag=f"s{seed}", index=index)
            except KeyboardInterrupt:
                # Stopped by hand: the figures so far still count.
                tally.interrupted_at = index
                break
            tally.add(outcome, case)
            fault = upstream_fault(outcome.upstream, outcome.ours) if outcome.differences else None
            if fault is not None:
                tally.upstream_faults += 1
                if echo:
                    print(f"case {index}: kube-scheduler fault not copied: {fault}", flush=True)
            elif outcome.differences:
                path = save_scenario(out_dir, seed, case, outcome)
                tally.disagreements.append(path)
                if echo:
                    print(f"case {index}: DISAGREE ({path})", *outcome.differences, sep="\n  ")
            elif echo and tally.cases % 50 == 0:
                print(f"{tally.cases} cases, all agreeing so far", flush=True)
    return tally


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m tests.differential.runner", description=__doc__
    )
    parser.add_argument("--cases", type=int, default=100)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--first", type=int, default=0, help="index of the first case")
    parser.add_argument("--replay", type=Path, help="run the case of one scenario file")
    parser.add_argument("--out", type=Path, default=Path("differential-scenarios"))
    args = parser.parse_args(argv)
    if args.cases < 1:
        parser.error("--cases must be positive")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # SIGTERM (e.g. from `timeout`) unwinds like Ctrl-C, so the schedulers and the control
    # plane are stopped on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    binaries = ensure_binaries()
    log_dir = Path(tempfile.mkdtemp(prefix="sched-differential-"))
    print(f"scheduler logs in {log_dir}", flush=True)
    if args.replay:
        document = json.loads(args.replay.read_text())
        cases = [(int(document["index"]), Case.from_json(document["case"]))]
        seed = int(document["seed"])
    else:
        seed = args.seed
        cases = [(i, generate(seed, i)) for i in range(args.first, args.first + args.cases)]
    started = time.monotonic()
    tally = run_cases(binaries, cases, seed=seed, out_dir=args.out, log_dir=log_dir)
    print(tally.summary())
    print(f"took {time.monotonic() - started:.0f} s")
    return 1 if tally.disagreements else 0


if __name__ == "__main__":
    sys.exit(main())
