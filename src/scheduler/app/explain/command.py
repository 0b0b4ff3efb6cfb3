"""`kube-pyscheduler explain POD`: the command line, for a live cluster or a scenario."""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import sys
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path

from scheduler.app.configuration import load_effective
from scheduler.app.configuration import plugin_registry
from scheduler.app.explain.render import OUTPUTS
from scheduler.app.explain.render import write
from scheduler.app.feature_gates import checked_feature_gates
from scheduler.app.scenario import Scenario
from scheduler.app.scenario import load_scenario_file
from scheduler.app.simulation import simulate
from scheduler.cluster.sim import SimCluster
from scheduler.config import EffectiveProfile
from scheduler.config import KubeSchedulerConfiguration
from scheduler.config.feature_gates import FeatureGates
from scheduler.core.explain.model import Explanation
from scheduler.core.explain.session import DEFAULT_SEED
from scheduler.core.explain.session import explain_in
from scheduler.framework.clock import SystemClock
from scheduler.framework.errors import ConfigError
from scheduler.framework.spec import PluginSpec
from scheduler.objects.raw import DEFAULT_NAMESPACE
from scheduler.observability import configure_logging


def add_explain_flags(
    explain: argparse.ArgumentParser,
    add_plugin_flags: Callable[[argparse.ArgumentParser], None],
) -> None:
    explain.description = (
        "Run a pod through its profile exactly as the scheduler would, read-only, and "
        "report every Filter plugin's verdict on every node, the Score of every plugin on "
        "the feasible nodes, what PreFilter and PostFilter (preemption, planned only) "
        "said, and the nearest changes to the pod that would let it schedule, each "
        "checked by filtering the changed pod again. Against a live cluster (--kubeconfig) "
        "or, with --scenario, the cluster that `simulate` leaves after scheduling the "
        "scenario. Nothing is ever written to the cluster."
    )
    explain.add_argument("pod", help="NAMESPACE/NAME, or NAME with -n")
    explain.add_argument("-n", "--namespace", default=None, help="the pod's namespace")
    explain.add_argument(
        "--kubeconfig",
        default=None,
        help="kubeconfig of the live cluster (default: as kubectl, $KUBECONFIG, else "
        "~/.kube/config, else the pod's service account)",
    )
    explain.add_argument(
        "--context", default=None, help="the kubeconfig context to use (default: its current)"
    )
    explain.add_argument(
        "--config", type=Path, help="the KubeSchedulerConfiguration file the daemon reads"
    )
    explain.add_argument(
        "--scenario",
        type=Path,
        action="append",
        default=[],
        metavar="FILE",
        help="explain against a simulated cluster built from these files (repeatable)",
    )
    explain.add_argument(
        "--feature-gates",
        action="append",
        metavar="GATES",
        help="Name=bool,... as the daemon runs with (as for `run`), so that the pod is "
        "explained under the same gates",
    )
    explain.add_argument("-o", "--output", choices=OUTPUTS, default="table")
    explain.add_argument(
        "--seed",
        type=int,
        default=DEFAULT_SEED,
        help=f"seed of the scheduler's random choices (default {DEFAULT_SEED})",
    )
    add_plugin_flags(explain)


def pod_key(pod: str, namespace: str | None) -> tuple[str, str]:
    if "/" in pod:
        if namespace is not None:
            raise ConfigError(f"POD {pod!r}: give NAMESPACE/NAME or -n, not both")
        ns, _, name = pod.partition("/")
    else:
        ns, name = namespace or DEFAULT_NAMESPACE, pod
    if not ns or not name or "/" in name:
        raise ConfigError(f"POD {pod!r}: expected NAMESPACE/NAME or NAME")
    return ns, name


async def _explain_scenario(
    args: argparse.Namespace,
    scenario: Scenario,
    loaded: tuple[KubeSchedulerConfiguration, Sequence[EffectiveProfile]],
    registry: Mapping[str, PluginSpec],
    key: tuple[str, str],
    features: FeatureGates,
) -> Explanation:
    config, profiles = loaded
    # Seeded as simulate seeds its own cluster, so the run explained is the run simulate shows.
    sim = SimCluster(clock=SystemClock(), rng=random.Random(args.seed))
    try:
        await simulate(
            scenario.objects,
            config,
            profiles,
            registry,
            seed=args.seed,
            cluster=sim,
            features=features,
        )
    except ConfigError as exc:
        raise ConfigError(f"{', '.join(scenario.sources)}: {exc}") from exc
    return await explain_in(
        sim, *key, config, profiles, registry, seed=args.seed, features=features
    )


async def _explain_live(
    args: argparse.Namespace,
    loaded: tuple[KubeSchedulerConfiguration, Sequence[EffectiveProfile]],
    registry: Mapping[str, PluginSpec],
    key: tuple[str, str],
    features: FeatureGates,
) -> Explanation:
    # Imported here: only the live mode needs the real-cluster client, which is slow to import.
    from scheduler.cluster.kube import connect  # noqa: PLC0415
    from scheduler.cluster.kube import default_user_agent  # noqa: PLC0415

    config, profiles = loaded
    connection = config.client_connection
    kubeconfig, flag = _kubeconfig(args.kubeconfig or connection.kubeconfig or None)
    client = await connect(
        kubeconfig=kubeconfig,
        master=None,
        context=args.context,
        flag=flag,
        master_flag="",
        qps=connection.qps,
        burst=connection.burst,
        user_agent=f"{default_user_agent()}/explain",
    )
    try:
        return await explain_in(
            client,
            *key,
            config,
            profiles,
            registry,
            seed=args.seed,
            features=features,
        )
    finally:
        await client.close()


def _kubeconfig(named: str | None) -> tuple[str | None, str]:
    """The kubeconfig to read and the name errors give it: the one named (flag, or the
    configuration's clientConnection), else where kubectl looks. None, with no service
    account to fall back on, is refused here, naming every place looked at."""
    from scheduler.cluster.kube.kubectl_lookup import kubectl_kubeconfig  # noqa: PLC0415

    if named:
        return named, "--kubeconfig"
    found = kubectl_kubeconfig(os.environ, Path.home())
    if found is not None:
        return found
    if not os.environ.get("KUBERNETES_SERVICE_HOST"):
        raise ConfigError(
            "--kubeconfig: no cluster to connect to; pass --kubeconfig (or, with --config, "
            "set clientConnection.kubeconfig), set $KUBECONFIG, create ~/.kube/config, or "
            "run inside a pod with a service account"
        )
    return None, "--kubeconfig"


def _refuse_extenders(config: KubeSchedulerConfiguration) -> None:
    """explain never calls out: an HTTP extender is a remote party whose verdict it cannot
    read without sending the pod, so a configuration naming one is refused rather than
    explained without it."""
    if config.extenders:
        prefixes = ", ".join(e.url_prefix or "(no urlPrefix)" for e in config.extenders)
        raise ConfigError(
            f"extenders: explain does not call HTTP extenders ({prefixes}); explain with a "
            "configuration without them, knowing the extenders may still reject the pod"
        )


def run_explain(args: argparse.Namespace) -> int:
    configure_logging("text", 0, cache_loggers=False)
    key = pod_key(args.pod, args.namespace)
    features = FeatureGates(checked_feature_gates(args.feature_gates))
    registry = plugin_registry(args.plugin, autoload=not args.no_plugin_autoload)
    if args.scenario:
        if args.kubeconfig or args.context:
            given = "--kubeconfig" if args.kubeconfig else "--context"
            raise ConfigError(f"--scenario and {given}: give one or the other")
        scenario = Scenario()
        for file in args.scenario:
            scenario.extend(load_scenario_file(file))
        loaded = load_effective(
            registry, path=args.config, embedded=scenario.config, gates=features.enabled
        )
        _refuse_extenders(loaded[0])
        explanation = asyncio.run(
            _explain_scenario(args, scenario, loaded, registry, key, features)
        )
    else:
        loaded = load_effective(registry, path=args.config, gates=features.enabled)
        _refuse_extenders(loaded[0])
        explanation = asyncio.run(_explain_live(args, loaded, registry, key, features))
    write(explanation, args.output, sys.stdout)
    return 0
