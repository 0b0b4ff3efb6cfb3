"""Running the command line on one bad input and checking how it ended.

Whatever the input, the command must end within a CPU-time budget and memory budgets, with
exit 0 or the documented exit 2 for bad input, and without a traceback; on exit 2 it prints one
error whose every line starts with a path: the file (with its line and column where known), a
field path such as `profiles[0].pluginConfig[1].args.hardPodAffinityWeight`, or a flag.
"""

from __future__ import annotations

import contextlib
import io
import re
import resource
import signal
import time
import tracemalloc
from collections.abc import Iterator
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

import pytest

from scheduler.app import cli
from scheduler.framework.spec import PluginSpec

EXIT_BAD_INPUT = 2
# The budgets of one input. CPU time, not wall time: the machine is shared, and a hang or an
# exponential expansion costs orders of magnitude more than either. A healthy run takes well
# under half a second; the margin absorbs a loaded CI machine (cache misses, frequency
# scaling count as CPU time too).
CPU_SECONDS = 3.0
PEAK_BYTES = 64 * 2**20
ADDRESS_SPACE_BYTES = 512 * 2**20
# A stuck call (waiting, or in a C loop that never checks the CPU clock) is stopped here.
WALL_SECONDS = 30.0

# A field path such as profiles[0].pluginConfig[1].args.x; a key may be any text without
# spaces or colons (an unknown key is reported as written).
# An index, a quoted key, or (as upstream names a bad node-selector value, values[0][zone])
# the requirement's label key after the index.
_INDEX = r'(?:\[\d+\]|\["[^"]*"\]|\[[\w./-]+\])*'
# A path may start with a quoted key: `["\\ufeffkind"]` names an odd top-level key.
_FIELD_PATH = rf'(?:[^\s:.\[\]]+|\["[^"]*"\]){_INDEX}(?:\.[^\s:.\[\]]+{_INDEX})*'


class HungError(Exception):
    """The command did not return within WALL_SECONDS."""


@dataclass(frozen=True, slots=True)
class Outcome:
    code: int
    stdout: str
    stderr: str
    cpu_seconds: float
    peak_bytes: int


@contextlib.contextmanager
def _wall_clock_limit(seconds: float) -> Iterator[None]:
    def stop(signum: int, frame: FrameType | None) -> None:
        raise HungError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def _address_space_limit(extra: int) -> Iterator[None]:
    """Let the process grow by at most `extra` bytes of address space: past it, allocations
    fail with MemoryError, which no command catches, so the test fails."""
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    pages = int(Path("/proc/self/statm").read_text().split()[0])
    limit = pages * resource.getpagesize() + extra
    resource.setrlimit(resource.RLIMIT_AS, (limit if hard < 0 else min(limit, hard), hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


@contextlib.contextmanager
def _traced_peak(trace: bool, peak: list[int]) -> Iterator[None]:
    if not trace:
        yield
        return
    tracemalloc.start()
    try:
        yield
        peak.append(tracemalloc.get_traced_memory()[1])
    finally:
        tracemalloc.stop()


def run_cli(argv: Sequence[str], *, trace_memory: bool = True) -> Outcome:
    """Run `kube-pyscheduler ARGV` in this process; any exception it lets out propagates.

    The address space may grow by ADDRESS_SPACE_BYTES at most. With `trace_memory` the peak of
    Python allocations is measured too (exact, but it makes every allocation several times
    slower, so the fuzz tests rely on the address-space limit alone)."""
    out, err = io.StringIO(), io.StringIO()
    peak: list[int] = []
    started = time.process_time()
    with (
        _address_space_limit(ADDRESS_SPACE_BYTES),
        _traced_peak(trace_memory, peak),
        _wall_clock_limit(WALL_SECONDS),
        contextlib.redirect_stdout(out),
        contextlib.redirect_stderr(err),
    ):
        code = cli.main(list(argv))
    cpu = time.process_time() - started
    return Outcome(code, out.getvalue(), err.getvalue(), cpu, peak[0] if peak else 0)


def use_registry(monkeypatch: pytest.MonkeyPatch, registry: Mapping[str, PluginSpec]) -> None:
    """Give the command line an already discovered registry: discovery reads every installed
    distribution's metadata, which would cost more than the input under test."""
    monkeypatch.setattr(cli, "plugin_registry", lambda plugins, autoload=True: registry)


def warm_up(directory: Path) -> None:
    """Run both commands once on good input, so that the first case measured does not pay for
    the imports and caches every later run finds ready."""
    config = directory / "warm-up-config.yaml"
    config.write_text(WARM_UP_CONFIG)
    scenario = directory / "warm-up-scenario.yaml"
    scenario.write_text(WARM_UP_SCENARIO)
    for argv in (
        ["validate-config", str(config)],
        ["simulate", str(scenario), "--no-progress", "--output", "json"],
    ):
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            assert cli.main(argv) == 0


WARM_UP_CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- pluginConfig:
  - name: InterPodAffinity
    args: {hardPodAffinityWeight: 2}
"""
WARM_UP_SCENARIO = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: '4', memory: 8Gi, pods: '10'}}
---
apiVersion: v1
kind: Pod
metadata: {name: p1}
spec: {containers: [{name: c, image: x, resources: {requests: {cpu: '1'}}}]}
"""


def assert_bounded(outcome: Outcome) -> None:
    assert outcome.cpu_seconds < CPU_SECONDS, f"took {outcome.cpu_seconds:.2f} s of CPU"
    assert outcome.peak_bytes < PEAK_BYTES, f"peaked at {outcome.peak_bytes / 2**20:.0f} MiB"
    assert "Traceback" not in outcome.stderr, outcome.stderr


def assert_clean_ending(outcome: Outcome, source: str) -> None:
    """Exit 0, or exit 2 with one error whose every line names `source` or a field path."""
    assert_bounded(outcome)
    assert outcome.code in (0, EXIT_BAD_INPUT), outcome
    if outcome.code == 0:
        return
    assert outcome.stderr.startswith("error: "), outcome.stderr
    message = outcome.stderr.removeprefix("error: ")
    assert "\nerror: " not in message, "more than one error printed"
    path = re.compile(
        rf"(?:{re.escape(source)}(?::\d+:\d+)?|{_FIELD_PATH}|--[\w-]+): \S"
        # An unknown field, worded as upstream words it, has its path inside the message.
        rf'|strict decoding error: unknown field "{_FIELD_PATH}"$'
    )
    for line in message.rstrip("\n").split("\n"):
        assert path.match(line), f"no path at the start of {line!r} in:\n{outcome.stderr}"
