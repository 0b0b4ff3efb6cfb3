"""`kube-pyscheduler simulate`: the scenario, the in-memory run and its report.

Imported only when `simulate` runs (see `cli`): the daemon has no use for any of it.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Coroutine
from typing import Any

from scheduler.app import html_report
from scheduler.app import report
from scheduler.app.cli import EXIT_POD_ERRORS
from scheduler.app.cli import EXIT_TIMED_OUT
from scheduler.app.configuration import check_extenders
from scheduler.app.configuration import load_effective
from scheduler.app.configuration import plugin_registry
from scheduler.app.dra_scenario import claim_gpus
from scheduler.app.dra_scenario import gpu_slices
from scheduler.app.feature_gates import checked_feature_gates
from scheduler.app.gangs import GANG_CONFIG
from scheduler.app.gangs import generate_gangs
from scheduler.app.gangs import require_coscheduling
from scheduler.app.output_format import OutputChoice
from scheduler.app.progress import BindingProgress
from scheduler.app.scenario import Scenario
from scheduler.app.scenario import generate_nodes
from scheduler.app.scenario import generate_pods
from scheduler.app.scenario import load_bundled
from scheduler.app.scenario import load_scenario_file
from scheduler.app.scenario import parse_shape
from scheduler.app.simulation import SimulationResult
from scheduler.app.simulation import simulate
from scheduler.config.feature_gates import FeatureGates
from scheduler.framework.errors import ConfigError
from scheduler.observability import configure_logging


def _run(simulation: Coroutine[Any, Any, SimulationResult]) -> SimulationResult:
    """`asyncio.run(simulation)`, its result handed out past the task rather than as the
    task's own: on the way out asyncio.run looks up the SIGINT handler it installed, a
    partial holding the main task, and the failed enum conversion in that lookup formats
    the handler's repr, with the finished task's result in it. A large simulation's result
    takes seconds to repr; a task whose result is None takes nothing."""
    results: list[SimulationResult] = []

    async def main() -> None:
        results.append(await simulation)

    asyncio.run(main())
    return results[0]


def _validate_counts(args: argparse.Namespace) -> None:
    for option in ("nodes", "pods", "zones", "gangs", "gpus_per_node", "pod_gpus"):
        if getattr(args, option) < 0:
            raise ConfigError(f"--{option.replace('_', '-')}: must be zero or more")
    if args.gang_size < 1:
        raise ConfigError("--gang-size: must be one or more")
    if not args.timeout > 0:
        raise ConfigError(f"--timeout: must be a positive number of seconds, got {args.timeout}")


def run_simulate(args: argparse.Namespace) -> int:
    _validate_counts(args)
    gates = checked_feature_gates(args.feature_gates)
    # Logs go to stderr so that the report on stdout stays machine-readable. At -v=0 a run logs
    # only warnings and plugin faults, so loggers need not cache their configuration (which
    # keeps `simulate` callable many times in one process, as tests and notebooks do).
    configure_logging("text", 0, cache_loggers=False)
    registry = plugin_registry(args.plugin, autoload=not args.no_plugin_autoload)
    output: OutputChoice = args.output
    files = [*args.files, *output.inputs]
    scenario = Scenario()
    for file in files:
        scenario.extend(load_scenario_file(file))
    if args.nodes:
        nodes = generate_nodes(args.nodes, parse_shape(args.node_shape, "--node-shape"), args.zones)
        scenario.objects.extend(nodes)
        if args.gpus_per_node:
            scenario.objects.extend(gpu_slices(nodes, args.gpus_per_node))
    if args.pods:
        pods = generate_pods(
            args.pods, parse_shape(args.pod_shape, "--pod-shape"), args.pod_scheduler_name
        )
        scenario.objects.extend(pods)
        if args.pod_gpus:
            scenario.objects.extend(claim_gpus(pods, args.pod_gpus))
    if args.gangs:
        scenario.objects.extend(
            generate_gangs(
                args.gangs,
                args.gang_size,
                parse_shape(args.pod_shape, "--pod-shape"),
                args.pod_scheduler_name,
            )
        )
        if args.config is None and scenario.config is None:
            scenario.config = GANG_CONFIG
    if not files and not args.nodes and not args.pods and not args.gangs:
        scenario = load_bundled()
    config, profiles = load_effective(
        registry, path=args.config, embedded=scenario.config, gates=FeatureGates(gates).enabled
    )
    check_extenders(config)
    if args.gangs:
        require_coscheduling(profiles, args.pod_scheduler_name)
    progress = BindingProgress() if not args.no_progress else None
    try:
        result = _run(
            simulate(
                scenario.objects,
                config,
                profiles,
                registry,
                seed=args.seed,
                progress=progress,
                features=FeatureGates(gates),
                timeout=args.timeout,
            )
        )
    except ConfigError as exc:  # an object the simulated cluster refused
        raise ConfigError(f"{', '.join(scenario.sources) or 'generated objects'}: {exc}") from exc
    if progress is not None:
        progress.finish()
    if output.file is not None:
        html_report.write_page(result, output.file)
        report.write(result, "table")
        print(f"HTML report written to {output.file}", file=sys.stderr)
    else:
        report.write(result, output.format)
    if result.timed_out:
        print(f"error: the run did not finish within --timeout {args.timeout:g}s", file=sys.stderr)
        return EXIT_TIMED_OUT
    errors = result.count("Error")
    if errors:
        print(f"error: {errors} pod(s) failed with a scheduler or plugin error", file=sys.stderr)
        return EXIT_POD_ERRORS
    return 0
