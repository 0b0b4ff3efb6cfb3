"""The `run` command's flags, as kube-scheduler spells them, and how they change the config."""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path

from scheduler.app.compat_flags import CompatOptions
from scheduler.app.compat_flags import add_compat_flags
from scheduler.app.flag_kinds import bool_flag
from scheduler.app.flag_kinds import flag_duration
from scheduler.app.flag_kinds import ip_text
from scheduler.app.flag_kinds import optional_path
from scheduler.app.flag_kinds import verbosity_level
from scheduler.app.secure_port_options import SecurePortOptions
from scheduler.app.secure_port_options import add_secure_port_flags
from scheduler.app.serving_cert import check_serving_pair
from scheduler.config import KubeSchedulerConfiguration
from scheduler.config.field_errors import raise_if_any
from scheduler.config.validation import validate_configuration
from scheduler.framework.errors import ConfigError

DEFAULT_SECURE_PORT = 10259
DEFAULT_BIND_ADDRESS = "0.0.0.0"
DEFAULT_SHUTDOWN_TIMEOUT_S = 20.0
MAX_PORT = 65535


@dataclass(slots=True)
class RunOptions:
    config: Path | None = None
    master: str | None = None
    leader_elect: bool | None = None
    lease_duration: str | None = None
    renew_deadline: str | None = None
    retry_period: str | None = None
    resource_name: str | None = None
    resource_namespace: str | None = None
    scheduler_name: str | None = None
    secure_port: int = DEFAULT_SECURE_PORT
    bind_address: str = DEFAULT_BIND_ADDRESS
    tls_cert_file: str | None = None
    tls_private_key_file: str | None = None
    verbosity: int = 0
    logging_format: str = "text"
    write_config_to: Path | None = None
    plugins: list[str] = field(default_factory=list)
    autoload: bool = True
    shutdown_timeout: float = DEFAULT_SHUTDOWN_TIMEOUT_S
    plugin_result_annotation: bool = False
    secure_port_access: SecurePortOptions = field(default_factory=SecurePortOptions)
    compat: CompatOptions = field(default_factory=CompatOptions)
    # Every flag with its value as kube-scheduler prints it, for /flagz (see flag_values).
    flag_values: dict[str, str] = field(default_factory=dict)

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> RunOptions:
        return cls(
            config=args.config,
            master=args.master,
            leader_elect=args.leader_elect,
            lease_duration=args.leader_elect_lease_duration,
            renew_deadline=args.leader_elect_renew_deadline,
            retry_period=args.leader_elect_retry_period,
            resource_name=args.leader_elect_resource_name,
            resource_namespace=args.leader_elect_resource_namespace,
            scheduler_name=args.scheduler_name,
            secure_port=args.secure_port,
            bind_address=args.bind_address or DEFAULT_BIND_ADDRESS,
            tls_cert_file=args.tls_cert_file or None,
            tls_private_key_file=args.tls_private_key_file or None,
            verbosity=args.v,
            logging_format=args.logging_format,
            write_config_to=args.write_config_to,
            plugins=list(args.plugin),
            autoload=not args.no_plugin_autoload,
            shutdown_timeout=args.shutdown_timeout,
            plugin_result_annotation=args.plugin_result_annotation,
            secure_port_access=SecurePortOptions.from_args(args),
            compat=CompatOptions.from_args(args),
        )


def add_cluster_flags(parser: argparse.ArgumentParser) -> None:
    """Which cluster to talk to, as kube-scheduler names it."""
    parser.add_argument("--kubeconfig", help="kubeconfig of the cluster (else in-cluster config)")
    parser.add_argument("--master", help="API server URL; overrides the kubeconfig's server")


def add_run_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--config", type=optional_path, help="KubeSchedulerConfiguration file")
    add_cluster_flags(parser)
    bool_flag(
        parser,
        "--leader-elect",
        None,
        "hold a Lease before scheduling, so only one replica schedules (default true)",
    )
    parser.add_argument("--leader-elect-lease-duration", metavar="DURATION", help="default 15s")
    parser.add_argument("--leader-elect-renew-deadline", metavar="DURATION", help="default 10s")
    parser.add_argument("--leader-elect-retry-period", metavar="DURATION", help="default 2s")
    parser.add_argument(
        "--leader-elect-resource-name",
        metavar="NAME",
        help="name of the Lease; give every scheduler its own (default kube-scheduler)",
    )
    parser.add_argument(
        "--leader-elect-resource-namespace", metavar="NAMESPACE", help="default kube-system"
    )
    parser.add_argument(
        "--scheduler-name",
        metavar="NAME",
        help="schedulerName of the only profile (with or without --config)",
    )
    parser.add_argument(
        "--secure-port",
        type=int,
        default=DEFAULT_SECURE_PORT,
        metavar="PORT",
        help="port of HTTPS with authentication and authorization (health, metrics, configz); "
        "0 turns it off",
    )
    parser.add_argument(
        "--bind-address",
        type=ip_text,
        default=DEFAULT_BIND_ADDRESS,
        metavar="IP",
        help="address of the secure port; 0.0.0.0 (the default) or :: listens on every "
        "address of both IP families",
    )
    parser.add_argument("--tls-cert-file", help="serving certificate (self-signed if absent)")
    parser.add_argument("--tls-private-key-file", help="key of --tls-cert-file")
    parser.add_argument(
        "-v", "--v", type=verbosity_level, default=0, metavar="LEVEL", help="log verbosity"
    )
    parser.add_argument("--logging-format", choices=("text", "json"), default="text")
    parser.add_argument(
        "--write-config-to",
        type=optional_path,
        metavar="FILE",
        help="write the effective, defaulted configuration to FILE and exit",
    )
    parser.add_argument(
        "--shutdown-timeout",
        type=float,
        default=DEFAULT_SHUTDOWN_TIMEOUT_S,
        metavar="SECONDS",
        help="how long SIGTERM may wait for binding cycles, status patches and Events",
    )
    parser.add_argument(
        "--plugin-result-annotation",
        action="store_true",
        help="record why each failed attempt failed (per plugin and node, at most 8 KiB) in "
        "the pod's kube-pyscheduler.io/filter-result annotation, removed once the pod is bound; "
        "needs patch on pods",
    )
    add_secure_port_flags(parser)
    add_compat_flags(parser)


def apply_flags(
    config: KubeSchedulerConfiguration, options: RunOptions
) -> KubeSchedulerConfiguration:
    """The `--leader-elect*` and connection flags override the file, as in kube-scheduler,
    which then validates the result again: a flag may set what the file could not."""
    check_secure_port(options.secure_port)
    if options.secure_port != 0:
        check_serving_pair(options.tls_cert_file, options.tls_private_key_file)
    election: dict[str, object] = {}
    if options.leader_elect is not None:
        election["leader_elect"] = options.leader_elect
    for flag, key, value in (
        ("--leader-elect-lease-duration", "lease_duration", options.lease_duration),
        ("--leader-elect-renew-deadline", "renew_deadline", options.renew_deadline),
        ("--leader-elect-retry-period", "retry_period", options.retry_period),
    ):
        if value is not None:
            election[key] = flag_duration(flag, value)
    if options.resource_name is not None:
        election["resource_name"] = options.resource_name
    if options.resource_namespace is not None:
        election["resource_namespace"] = options.resource_namespace
    if election:
        config = config.model_copy(
            update={"leader_election": config.leader_election.model_copy(update=election)}
        )
    updated = options.compat.apply(config, with_config_file=options.config is not None)
    raise_if_any(validate_configuration(updated))
    le = updated.leader_election
    if le.leader_elect and not le.lease_duration > le.renew_deadline > 1.2 * le.retry_period:
        raise ConfigError(
            "leaderElection: leaseDuration must be greater than renewDeadline, which must be "
            "greater than 1.2 x retryPeriod"
        )
    return updated


def check_secure_port(port: int) -> None:
    """kube-scheduler's rule (its secure port is optional): 0 turns it off, else a TCP port."""
    if not 0 <= port <= MAX_PORT:
        raise ConfigError(
            f"--secure-port {port} must be between 0 and {MAX_PORT}, inclusive. "
            "0 for turning off secure port"
        )
