"""Profile kube-pyscheduler's daemon end to end during a `bench.compare` drain run.

Runs `python -m bench.compare --schedulers ours` once (defaults mode, drain load, basic workload)
with the given sizes, attaches py-spy
(`pip install py-spy`) to the daemon as soon as it is spawned, and when the run is over prints
the profile's top entries by own time and by inclusive time. The raw py-spy output (collapsed
stacks, one line per stack) stays in the output folder, with the benchmark's logs.

    python -m bench.profile_daemon [--nodes 5000 --pods 10000] [--out DIR] [--top 20]
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

SAMPLES_PER_SECOND = 100
SPAWN_POLL_S = 0.05
DAEMON_MARKER = "scheduler.app.launch"


def _daemon_pid(parent: int) -> int | None:
    """The pid of the daemon `bench.compare` (pid `parent`) spawned, once it has."""
    found = subprocess.run(
        ["pgrep", "-P", str(parent), "-f", DAEMON_MARKER],
        capture_output=True,
        text=True,
        check=False,
    )
    pids = found.stdout.split()
    return int(pids[0]) if pids else None


def _frame_name(frame: str) -> str:
    """`function (path:line)` as `function (module path)`: lines merged, site-packages cut."""
    frame = re.sub(r":\d+\)$", ")", frame)
    return re.sub(r"\(.*?/(site-packages|src)/", "(", frame)


def top_entries(collapsed: Path, count: int) -> tuple[list[str], list[str]]:
    """The `count` heaviest frames of a collapsed-stack file, by own and by inclusive samples,
    each as `percent frame`."""
    own: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    total = 0
    for line in collapsed.read_text().splitlines():
        stack, _, samples = line.rpartition(" ")
        if not stack or not samples.isdigit():
            continue
        weight = int(samples)
        total += weight
        frames = [
            _frame_name(f) for f in stack.split(";") if not f.startswith(("process ", "thread "))
        ]
        if frames:
            own[frames[-1]] += weight
        for frame in set(frames):
            inclusive[frame] += weight

    def rows(counter: Counter[str]) -> list[str]:
        return [
            f"{100 * n / max(total, 1):5.1f}%  {frame}" for frame, n in counter.most_common(count)
        ]

    return rows(own), rows(inclusive)


def compare_argv(nodes: int, pods: int, out: Path) -> list[str]:
    """`bench.compare`'s arguments for one run of ours alone: scheduler defaults, a drain of the
    plain-pod workload, its JSON and logs kept in `out`."""
    return [
        "--schedulers=ours",
        "--repeat=1",
        "--modes=defaults",
        "--loads=drain",
        "--workloads=basic",
        f"--nodes={nodes}",
        f"--pods={pods}",
        f"--json={out / 'bench.json'}",
        f"--log-dir={out / 'logs'}",
    ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.profile_daemon", description=__doc__)
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--pods", type=int, default=10000)
    parser.add_argument("--out", type=Path, help="folder for the profiles and logs")
    parser.add_argument("--top", type=int, default=20, help="entries per table")
    args = parser.parse_args(argv)
    py_spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not Path(py_spy).exists():
        parser.error("py-spy is not installed (pip install py-spy)")
    out = args.out or Path(tempfile.mkdtemp(prefix="daemon-profile-"))
    out.mkdir(parents=True, exist_ok=True)
    bench = subprocess.Popen(
        [sys.executable, "-m", "bench.compare", *compare_argv(args.nodes, args.pods, out)]
    )
    raw = out / "profile.raw"
    recorder: subprocess.Popen[bytes] | None = None
    while bench.poll() is None and recorder is None:
        pid = _daemon_pid(bench.pid)
        if pid is None:
            time.sleep(SPAWN_POLL_S)
            continue
        command = [py_spy, "record", "--pid", str(pid), "--rate", str(SAMPLES_PER_SECOND)]
        command += ["--nonblocking", "--format", "raw", "-o", str(raw)]
        recorder = subprocess.Popen(command, stdout=subprocess.DEVNULL)
    code = bench.wait()
    if recorder is not None:
        recorder.wait()
    if not raw.exists():
        print(f"no profile was recorded (bench.compare exited {code})", file=sys.stderr)
        return 1
    own, inclusive = top_entries(raw, args.top)
    print(f"\nprofiles in {out}\n\ntop {args.top} by own time:")
    print("\n".join(own))
    print(f"\ntop {args.top} by inclusive time:")
    print("\n".join(inclusive))
    return code


if __name__ == "__main__":
    raise SystemExit(main())
