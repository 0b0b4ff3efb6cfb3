"""The `kube-pyscheduler` command.

Each command's code is imported only when that command runs, and only its flags are defined
(the other commands are named, so that a mistyped one is still told the choices): `run`, the
daemon, then starts without the modules of `simulate` and `explain` (scenarios, reports, the
in-memory cluster), which would be a fifth of its imports for nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from scheduler.app.configuration import check_extenders
from scheduler.app.configuration import load_effective
from scheduler.app.configuration import plugin_registry
from scheduler.app.feature_gates import checked_feature_gates
from scheduler.app.flag_kinds import optional_path
from scheduler.app.flag_values import flag_values
from scheduler.app.output_format import OutputChoice
from scheduler.app.output_format import OutputFormat
from scheduler.app.pflag_words import bools_stand_alone
from scheduler.app.pflag_words import dashed_flag_names
from scheduler.app.pflag_words import unparsed
from scheduler.app.retire_check import check_scheduler_name
from scheduler.app.retire_check import pods_naming
from scheduler.app.retire_check import report_pods_naming
from scheduler.app.run_options import RunOptions
from scheduler.app.run_options import add_cluster_flags
from scheduler.app.run_options import add_run_flags
from scheduler.app.run_options import apply_flags
from scheduler.app.shadow.options import ShadowOptions
from scheduler.app.shadow.options import add_shadow_flags
from scheduler.app.startup_gc import START_UP
from scheduler.app.startup_marks import mark
from scheduler.app.startup_marks import process_age
from scheduler.app.version import version_text
from scheduler.config import dump_config
from scheduler.config.feature_gates import FeatureGates
from scheduler.framework.errors import ConfigError
from scheduler.framework.errors import PluginLoadError
from scheduler.framework.errors import SchedulerError
from scheduler.observability import configure_logging
from scheduler.observability import get_logger

EXIT_BAD_INPUT = 2
_log = get_logger("scheduler.cli")
# simulate: some pod failed with an Error (a plugin fault), not because nothing fits.
EXIT_POD_ERRORS = 3
# simulate: the run reached --timeout before every pod was placed or explained.
EXIT_TIMED_OUT = 4


def _add_plugin_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--plugin",
        action="append",
        default=[],
        metavar="MODULE:SPEC",
        help="load a plugin's PluginSpec from a module (repeatable), besides installed ones",
    )
    parser.add_argument(
        "--no-plugin-autoload",
        action="store_true",
        help="do not load plugins from installed entry points (only --plugin ones)",
    )


def _simulate_flags(sim: argparse.ArgumentParser) -> None:
    # Imported here: the simulator's modules are no part of the other commands.
    from scheduler.app.simulation import DEFAULT_TIMEOUT_SECONDS  # noqa: PLC0415

    sim.description = (
        "Schedule the pods of Kubernetes YAML files (or generated ones) onto an in-memory "
        "cluster with the real scheduler core. With no input, runs the bundled scenario."
    )
    sim.add_argument("files", nargs="*", type=Path, help="Kubernetes YAML with Nodes, Pods, ...")
    sim.add_argument("--config", type=Path, help="KubeSchedulerConfiguration file")
    sim.add_argument("--nodes", type=int, default=0, help="generate this many nodes")
    sim.add_argument("--pods", type=int, default=0, help="generate this many pods")
    sim.add_argument(
        "--node-shape", default="cpu=4,memory=32Gi,pods=110", help="allocatable of generated nodes"
    )
    sim.add_argument(
        "--pod-shape", default="cpu=100m,memory=500Mi", help="requests of generated pods"
    )
    sim.add_argument("--zones", type=int, default=0, help="spread generated nodes over N zones")
    sim.add_argument(
        "--gangs", type=int, default=0, help="generate this many PodGroups (with their pods)"
    )
    sim.add_argument(
        "--gang-size", type=int, default=4, help="minMember and pod count of generated PodGroups"
    )
    sim.add_argument(
        "--gpus-per-node",
        type=int,
        default=0,
        help="give each generated node this many GPUs in a ResourceSlice (dynamic resources)",
    )
    sim.add_argument(
        "--pod-gpus",
        type=int,
        default=0,
        help="each generated pod claims this many GPUs through a ResourceClaimTemplate",
    )
    sim.add_argument(
        "--pod-scheduler-name",
        default="default-scheduler",
        help="schedulerName of generated pods",
    )
    sim.add_argument(
        "--seed",
        type=int,
        default=None,
        metavar="N",
        help="seed of every random choice of the run (ties between equally good nodes, names "
        "and uids the controllers generate); without it a fresh seed is drawn, and the report "
        "prints the seed used so the run can be repeated exactly with --seed N",
    )
    sim.add_argument(
        "--output",
        nargs="+",
        action=OutputFormat,
        default=OutputChoice(),
        metavar=("FORMAT", "FILE"),
        help="table (the default), json (every pod's outcome), yaml (the final cluster "
        "objects), or html FILE: one self-contained page with per-node utilisation, failure "
        "reasons, per-profile placement and every pod, written to FILE",
    )
    sim.add_argument("--no-progress", action="store_true", help="no progress bar")
    sim.add_argument(
        "--feature-gates",
        action="append",
        metavar="GATES",
        help="Name=bool,... as for `run`: v1.36 defaults, and either way OpportunisticBatching "
        "(off, every pod is scored) and DRADeviceTaintRules (on, the scenario's "
        "DeviceTaintRules taint the devices they select; off, as by default, a scenario "
        "holding one is refused)",
    )
    sim.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT_SECONDS,
        metavar="SECONDS",
        help=f"stop the run after this many seconds of wall-clock time "
        f"(default {DEFAULT_TIMEOUT_SECONDS:g}); exits {EXIT_TIMED_OUT} if reached",
    )
    _add_plugin_flags(sim)


def _run_flags(run: argparse.ArgumentParser) -> None:
    run.description = (
        "Watch the cluster and schedule the pods that name one of the configured profiles. "
        "Flags follow kube-scheduler's. `run` is the default command; the others are "
        "`simulate`, `explain`, `validate-config` and `retire-check` "
        "(see `kube-pyscheduler <command> --help`)."
    )
    run.add_argument(
        "--version",
        nargs="?",
        const="true",
        default="false",
        choices=("true", "false", "raw"),
        metavar="true|raw",
        help="print the version and the Kubernetes release followed, and exit",
    )
    add_run_flags(run)
    add_shadow_flags(run)
    _add_plugin_flags(run)


def _validate_flags(validate: argparse.ArgumentParser) -> None:
    validate.description = (
        "Check a KubeSchedulerConfiguration; exit non-zero naming each bad field."
    )
    validate.add_argument("file", type=Path)
    validate.add_argument(
        "--write-config-to", type=optional_path, help="also write the effective, defaulted config"
    )
    validate.add_argument(
        "--feature-gates",
        action="append",
        metavar="GATES",
        help="Name=bool,... as for `run`: plugin args whose defaults or rules follow a gate "
        "(VolumeBindingArgs.shape under StorageCapacityScoring) are checked under these",
    )
    _add_plugin_flags(validate)


def _retire_check_flags(retire: argparse.ArgumentParser) -> None:
    retire.description = (
        "Before removing a scheduler: list every pod (all namespaces, any phase) whose "
        "spec.schedulerName is the given name. Exits 0 when there is none, 1 while some "
        "remain (they would stay Pending for ever once the scheduler is gone)."
    )
    retire.add_argument(
        "--scheduler-name", required=True, help="the schedulerName about to be retired"
    )
    add_cluster_flags(retire)


def _explain_flags(explain: argparse.ArgumentParser) -> None:
    from scheduler.app.explain.command import add_explain_flags  # noqa: PLC0415

    add_explain_flags(explain, _add_plugin_flags)


# Each command: its one-line summary and what defines its flags.
_COMMANDS: dict[str, tuple[str, Callable[[argparse.ArgumentParser], None]]] = {
    "simulate": ("run the scheduler against an in-memory cluster", _simulate_flags),
    "run": ("run the scheduler against a cluster (the default command)", _run_flags),
    "validate-config": ("check a KubeSchedulerConfiguration file", _validate_flags),
    "retire-check": (
        "list the pods that still name a scheduler; fail while there is one",
        _retire_check_flags,
    ),
    "explain": (
        "why a pod is pending: every node, every plugin, and the nearest fixes",
        _explain_flags,
    ),
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; with `command`, only that command's flags (see the module doc).

    A long flag must be spelled out, as pflag wants it: a prefix that happens to match one flag
    would otherwise set that flag instead of failing as a typo."""
    parser = argparse.ArgumentParser(
        prog="kube-pyscheduler",
        description="A Kubernetes scheduler implementing the Scheduler Framework, in Python.",
        allow_abbrev=False,
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (summary, define_flags) in _COMMANDS.items():
        sub = commands.add_parser(name, help=summary, allow_abbrev=False)
        if command is None or command == name:
            define_flags(sub)
    return parser


def _subcommands(parser: argparse.ArgumentParser) -> argparse._SubParsersAction[Any]:
    return next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))


def _command_parser(command: str) -> argparse.ArgumentParser:
    """The sub-parser of one command, with its flags."""
    parser: argparse.ArgumentParser = _subcommands(build_parser(command)).choices[command]
    return parser


def run_validate(args: argparse.Namespace) -> int:
    registry = plugin_registry(args.plugin, autoload=not args.no_plugin_autoload)
    gates = FeatureGates(checked_feature_gates(args.feature_gates))
    config, profiles = load_effective(registry, path=args.file, gates=gates.enabled)
    if args.write_config_to is not None:
        args.write_config_to.write_text(dump_config(config, profiles))
    names = ", ".join(p.scheduler_name for p in profiles)
    print(f"{args.file}: valid ({len(profiles)} profile(s): {names})")
    return 0


def run_daemon(args: argparse.Namespace) -> int:
    imported = process_age()
    if args.version != "false":
        print(version_text(args.version))
        return 0
    options = RunOptions.from_args(args)
    options.flag_values = flag_values(_command_parser("run"), args)
    shadow = ShadowOptions.from_args(args)
    registry = plugin_registry(options.plugins, autoload=options.autoload)
    config, profiles = load_effective(
        registry,
        path=options.config,
        scheduler_name=options.scheduler_name,
        gates=FeatureGates(options.compat.feature_gates).enabled,
    )
    config = apply_flags(config, options)
    if options.write_config_to is not None:
        options.write_config_to.write_text(dump_config(config, profiles))
        return 0
    check_extenders(config)
    configure_logging("json" if options.logging_format == "json" else "text", options.verbosity)
    for warning in options.compat.warnings:
        _log.warning(warning)
    mark(_log, "Configuration loaded", imports_done_at=imported)
    # Released by the daemon once its informers have synced (see startup_gc).
    START_UP.hold()
    try:
        # Imported here: the real-cluster client takes about half a second to import, and
        # only `run` needs it (simulate and validate-config start faster without it).
        from scheduler.app.serve import serve  # noqa: PLC0415

        return asyncio.run(serve(config, profiles, registry, options, shadow))
    finally:
        START_UP.release(freeze=False)


def run_retire_check(args: argparse.Namespace) -> int:
    name = check_scheduler_name(args.scheduler_name)
    # Imported here for the same reason as in run_daemon.
    from scheduler.cluster.kube import connect  # noqa: PLC0415
    from scheduler.cluster.kube import default_user_agent  # noqa: PLC0415

    async def listed() -> list[dict[str, object]]:
        client = await connect(
            kubeconfig=args.kubeconfig,
            master=args.master,
            qps=50.0,
            burst=100,
            user_agent=default_user_agent(),
        )
        try:
            return await pods_naming(client, name)
        finally:
            await client.close()

    return report_pods_naming(asyncio.run(listed()), name, sys.stdout)


def _with_default_command(argv: Sequence[str]) -> list[str]:
    """`kube-pyscheduler --config x` means `kube-pyscheduler run --config x`, as upstream; and
    `kube-pyscheduler --help` shows the flags of `run`, the default command."""
    args = list(argv)
    if not args or args[0].startswith("-"):
        return ["run", *args]
    return args


def main(argv: Sequence[str] | None = None) -> int:
    words = dashed_flag_names(_with_default_command(sys.argv[1:] if argv is None else argv))
    parser = build_parser(words[0])
    command = _subcommands(parser).choices.get(words[0])
    if command is not None:
        words = [words[0], *bools_stand_alone(words[1:], command)]
    args, extras = parser.parse_known_args(words)
    if extras:
        parser.error(unparsed(args.command, extras))
    if args.command != "run":
        # Held by the executable while the modules imported (see launch); only the daemon
        # keeps it until its caches have synced, the other commands collect as they go.
        START_UP.release(freeze=False)
    try:
        if args.command == "run":
            return run_daemon(args)
        if args.command == "simulate":
            from scheduler.app.simulate_command import run_simulate  # noqa: PLC0415

            return run_simulate(args)
        if args.command == "validate-config":
            return run_validate(args)
        if args.command == "retire-check":
            return run_retire_check(args)
        if args.command == "explain":
            from scheduler.app.explain.command import run_explain  # noqa: PLC0415

            return run_explain(args)
    except (ConfigError, PluginLoadError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except SchedulerError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    parser.print_help()
    return EXIT_BAD_INPUT


if __name__ == "__main__":
    raise SystemExit(main())
