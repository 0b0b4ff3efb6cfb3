"""The rest of kube-scheduler v1.36's flags, so that its manifests start this scheduler.

Each flag is either applied as kube-scheduler applies it, accepted with a one-line deprecation
warning where kube-scheduler deprecates it, or refused, naming the flag and why, where it has
no meaning here. A refused flag given its default value is accepted: it asks for nothing.

- deprecated, applied without --config and ignored with it (as upstream): --kubeconfig,
  --kube-api-qps, --kube-api-burst, --kube-api-content-type, --profiling,
  --contention-profiling (--kubeconfig is not reported as deprecated when it applies: it is how
  a scheduler outside a pod finds its cluster);
- deprecated and applied: --pod-max-in-unschedulable-pods-duration;
- --leader-elect-resource-lock: `leases`, the only lock v1.36 has;
- --feature-gates, --emulated-version, --min-compatibility-version: see `feature_gates`;
- the secure-serving ones are in `secure_port_options`;
- --log-flush-frequency: accepted if positive, as upstream; every record is written at once;
- refused unless at their defaults: --tls-sni-cert-key, --vmodule, --log-*-split-stream,
  --log-*-info-buffer-size, --show-hidden-metrics-for-version, --disabled-metrics,
  --allow-metric-labels, --allow-metric-labels-manifest.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from dataclasses import field

from scheduler.app.feature_gates import check_emulated_version
from scheduler.app.feature_gates import check_min_compatibility_version
from scheduler.app.feature_gates import checked_feature_gates
from scheduler.app.feature_gates import feature_gate_warnings
from scheduler.app.flag_kinds import bool_flag
from scheduler.app.flag_kinds import duration_flag
from scheduler.app.flag_kinds import list_flag
from scheduler.app.flag_kinds import repeatable_flag
from scheduler.app.flag_kinds import text_flag
from scheduler.backend.queue import DEFAULT_MAX_IN_UNSCHEDULABLE
from scheduler.config import KubeSchedulerConfiguration
from scheduler.config import format_duration
from scheduler.config.field_errors import ROOT
from scheduler.config.field_errors import invalid
from scheduler.framework.errors import ConfigError

LEASES_LOCK = "leases"


@dataclass(slots=True)
class CompatOptions:
    """What the flags ask for, after the checks; `warnings` are logged once logging is up."""

    kubeconfig: str | None = None
    qps: float | None = None
    burst: int | None = None
    content_type: str | None = None
    profiling: bool | None = None
    contention_profiling: bool | None = None
    max_in_unschedulable: float = DEFAULT_MAX_IN_UNSCHEDULABLE
    resource_lock: str | None = None
    feature_gates: dict[str, bool] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> CompatOptions:
        _refuse_inapplicable(args)
        gates = checked_feature_gates(args.feature_gates)
        check_emulated_version(args.emulated_version or [])
        check_min_compatibility_version(args.min_compatibility_version or [])
        _check_flush_frequency(args.log_flush_frequency)
        options = cls(
            kubeconfig=args.kubeconfig,
            qps=args.kube_api_qps,
            burst=args.kube_api_burst,
            content_type=args.kube_api_content_type,
            profiling=args.profiling,
            contention_profiling=args.contention_profiling,
            feature_gates=gates,
            warnings=feature_gate_warnings(gates),
        )
        if args.pod_max_in_unschedulable_pods_duration is not None:
            options.max_in_unschedulable = args.pod_max_in_unschedulable_pods_duration
        if args.leader_elect_resource_lock is not None:
            if args.leader_elect_resource_lock != LEASES_LOCK:
                raise ConfigError(
                    f"--leader-elect-resource-lock: {args.leader_elect_resource_lock!r} is not "
                    f'supported: kube-scheduler 1.36 locks with "{LEASES_LOCK}" only'
                )
            options.resource_lock = LEASES_LOCK
        with_config = args.config is not None
        for flag, value in _deprecated_client_flags(args):
            if value is not None:
                note = " and is ignored because --config is given" if with_config else ""
                options.warnings.append(f"Flag {flag} has been deprecated{note}")
        if with_config and args.kubeconfig is not None:
            options.warnings.append(
                "Flag --kubeconfig has been deprecated and is ignored because --config is given: "
                "the file's clientConnection.kubeconfig names the cluster"
            )
        if args.pod_max_in_unschedulable_pods_duration is not None:
            options.warnings.append(
                "Flag --pod-max-in-unschedulable-pods-duration has been deprecated"
            )
        return options

    def apply(
        self, config: KubeSchedulerConfiguration, *, with_config_file: bool
    ) -> KubeSchedulerConfiguration:
        """Without --config the deprecated flags set the configuration, as upstream's do; the
        lock flag applies either way."""
        update: dict[str, object] = {}
        if self.resource_lock is not None:
            update["leader_election"] = config.leader_election.model_copy(
                update={"resource_lock": self.resource_lock}
            )
        if not with_config_file:
            connection: dict[str, object] = {}
            if self.kubeconfig is not None:
                connection["kubeconfig"] = self.kubeconfig
            if self.qps is not None:
                connection["qps"] = self.qps
            if self.burst is not None:
                connection["burst"] = self.burst
            if self.content_type is not None:
                connection["content_type"] = self.content_type
            if connection:
                update["client_connection"] = config.client_connection.model_copy(update=connection)
            if self.profiling is not None:
                update["enable_profiling"] = self.profiling
            if self.contention_profiling is not None:
                update["enable_contention_profiling"] = self.contention_profiling
        return config.model_copy(update=update) if update else config


def _check_flush_frequency(seconds: float) -> None:
    """component-base's logging validation, in its words."""
    if seconds <= 0:
        path = ROOT.child("flushFrequency")
        raise ConfigError(str(invalid(path, format_duration(seconds), "Must be greater than zero")))


def _deprecated_client_flags(args: argparse.Namespace) -> list[tuple[str, object]]:
    return [
        ("--kube-api-qps", args.kube_api_qps),
        ("--kube-api-burst", args.kube_api_burst),
        ("--kube-api-content-type", args.kube_api_content_type),
        ("--profiling", args.profiling),
        ("--contention-profiling", args.contention_profiling),
    ]


# flag, argparse dest, why it cannot apply. Each is accepted at its default.
_REFUSED = (
    ("--tls-sni-cert-key", "tls_sni_cert_key", "serving several certificates by name is not "
     "supported; give one pair with --tls-cert-file/--tls-private-key-file"),
    ("--vmodule", "vmodule", "klog's per-file verbosity has no meaning for Python modules"),
    ("--log-text-split-stream", "log_text_split_stream", "every record goes to stderr"),
    ("--log-json-split-stream", "log_json_split_stream", "every record goes to stderr"),
    ("--log-text-info-buffer-size", "log_text_info_buffer_size", "records are not buffered"),
    ("--log-json-info-buffer-size", "log_json_info_buffer_size", "records are not buffered"),
    ("--show-hidden-metrics-for-version", "show_hidden_metrics_for_version",
     "kube-pyscheduler keeps no hidden metrics to show"),
    ("--disabled-metrics", "disabled_metrics", "metrics cannot be disabled one by one"),
    ("--allow-metric-labels", "allow_metric_labels", "label values are not filtered"),
    ("--allow-metric-labels-manifest", "allow_metric_labels_manifest",
     "label values are not filtered"),
)  # fmt: skip


def _refuse_inapplicable(args: argparse.Namespace) -> None:
    for flag, dest, why in _REFUSED:
        value = getattr(args, dest)
        if value not in (None, "", [], [[]], False, "0"):
            raise ConfigError(f"{flag}: cannot apply: {why}")


def add_compat_flags(parser: argparse.ArgumentParser) -> None:
    deprecated = parser.add_argument_group("deprecated")
    deprecated.add_argument(
        "--kube-api-qps",
        type=float,
        metavar="QPS",
        help="clientConnection.qps when there is no --config; 0 is client-go's default of 5, "
        "a negative QPS no limit",
    )
    deprecated.add_argument(
        "--kube-api-burst",
        type=int,
        metavar="N",
        help="clientConnection.burst when there is no --config",
    )
    deprecated.add_argument(
        "--kube-api-content-type",
        metavar="TYPE",
        help="clientConnection.contentType when there is no --config",
    )
    bool_flag(deprecated, "--profiling", None, "enableProfiling when there is no --config")
    bool_flag(
        deprecated,
        "--contention-profiling",
        None,
        "enableContentionProfiling when there is no --config",
    )
    duration_flag(
        deprecated,
        "--pod-max-in-unschedulable-pods-duration",
        None,
        "longest stay in the unschedulable pool (default 5m)",
    )

    election = parser.add_argument_group("leader election (more)")
    election.add_argument(
        "--leader-elect-resource-lock",
        metavar="LOCK",
        help='"leases", the only lock kube-scheduler 1.36 has',
    )

    gates = parser.add_argument_group("feature gate")
    repeatable_flag(
        gates,
        "--feature-gates",
        "GATES",
        "Name=bool,...; v1.36 defaults, and either way the z-page gates and OpportunisticBatching",
    )
    repeatable_flag(gates, "--emulated-version", "VERSION", "1.36 only")
    repeatable_flag(
        gates,
        "--min-compatibility-version",
        "VERSION",
        "1.33 to 1.36 (upstream's default 1.35); accepted, it changes nothing here",
    )

    metrics = parser.add_argument_group("metrics")
    text_flag(
        metrics,
        "--show-hidden-metrics-for-version",
        "VERSION",
        "refused: there are no hidden metrics",
    )
    list_flag(metrics, "--disabled-metrics", "refused", metavar="NAMES")
    repeatable_flag(metrics, "--allow-metric-labels", "MAP", "refused")
    text_flag(metrics, "--allow-metric-labels-manifest", "FILE", "refused")

    logs = parser.add_argument_group("logs")
    duration_flag(
        logs, "--log-flush-frequency", 5.0, "accepted if positive: records are written at once"
    )
    text_flag(logs, "--vmodule", "PATTERNS", "refused")
    for stream in ("text", "json"):
        bool_flag(logs, f"--log-{stream}-split-stream", False, "refused")
        logs.add_argument(
            f"--log-{stream}-info-buffer-size", default="0", metavar="SIZE", help="refused"
        )
