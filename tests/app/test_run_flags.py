"""Every flag of kube-scheduler v1.36 is accepted, applied, deprecated or refused by name."""

from __future__ import annotations

import argparse
import re
from datetime import UTC
from datetime import datetime
from pathlib import Path

import pytest
import yaml

from scheduler.app.cli import build_parser
from scheduler.app.cli import main
from scheduler.app.daemon import Daemon
from scheduler.app.flag_values import flag_values
from scheduler.app.run_options import RunOptions
from scheduler.app.run_options import apply_flags
from scheduler.app.run_options import check_secure_port
from scheduler.app.serving_cert import generate_self_signed
from scheduler.app.tls_options import TLSOptions
from scheduler.cluster.sim import SimCluster
from scheduler.config import KubeSchedulerConfiguration
from scheduler.config import default_config
from scheduler.config import load_config_dict
from scheduler.config.feature_gates import FeatureGates
from scheduler.core.scheduler import SchedulerSetup
from scheduler.framework.clock import SystemClock
from scheduler.framework.errors import ConfigError
from scheduler.runtime.discovery import PluginRegistry
from tests.app.daemon_on_sim import config_with_profile

# `kube-scheduler --help` of v1.36.3, every flag it lists.
UPSTREAM_FLAGS_TEXT = """
--config --master --write-config-to --bind-address --cert-dir --disable-http2-serving
--http2-max-streams-per-connection --permit-address-sharing --permit-port-sharing --secure-port
--tls-cert-file --tls-cipher-suites --tls-curve-preferences --tls-min-version
--tls-private-key-file --tls-sni-cert-key --authentication-kubeconfig --authentication-skip-lookup
--authentication-token-webhook-cache-ttl --authentication-tolerate-lookup-failure --client-ca-file
--requestheader-allowed-names --requestheader-client-ca-file --requestheader-extra-headers-prefix
--requestheader-group-headers --requestheader-uid-headers --requestheader-username-headers
--authorization-always-allow-paths --authorization-kubeconfig
--authorization-webhook-cache-authorized-ttl --authorization-webhook-cache-unauthorized-ttl
--contention-profiling --kube-api-burst --kube-api-content-type --kube-api-qps --kubeconfig
--pod-max-in-unschedulable-pods-duration --profiling --leader-elect --leader-elect-lease-duration
--leader-elect-renew-deadline --leader-elect-resource-lock --leader-elect-resource-name
--leader-elect-resource-namespace --leader-elect-retry-period --emulated-version --feature-gates
--min-compatibility-version --allow-metric-labels --allow-metric-labels-manifest
--disabled-metrics --show-hidden-metrics-for-version --log-flush-frequency
--log-json-info-buffer-size --log-json-split-stream --log-text-info-buffer-size
--log-text-split-stream --logging-format --v --vmodule --help --version
"""
UPSTREAM_FLAGS = UPSTREAM_FLAGS_TEXT.split()


def run_parser() -> argparse.ArgumentParser:
    parser = build_parser()
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    run: argparse.ArgumentParser = subparsers.choices["run"]
    return run


def options(*argv: str) -> RunOptions:
    return RunOptions.from_args(run_parser().parse_args(list(argv)))


def defaults() -> KubeSchedulerConfiguration:
    """The configuration without --config: upstream's defaults, one profile."""
    config, _ = default_config(PluginRegistry.discover())
    return config


def test_every_upstream_flag_is_known_to_run() -> None:
    ours = {flag for action in run_parser()._actions for flag in action.option_strings}
    assert len(UPSTREAM_FLAGS) == 62  # 61 and --help
    assert sorted(set(UPSTREAM_FLAGS) - ours) == []


def test_the_kubeadm_command_line_parses(tmp_path: Path) -> None:
    kubeconfig = "/etc/kubernetes/scheduler.conf"
    parsed = options(
        "--bind-address=127.0.0.1",
        "--leader-elect=true",
        f"--kubeconfig={kubeconfig}",
        f"--authentication-kubeconfig={kubeconfig}",
        f"--authorization-kubeconfig={kubeconfig}",
    )
    assert parsed.bind_address == "127.0.0.1"
    assert parsed.leader_elect is True
    assert parsed.secure_port_access.authentication_kubeconfig == kubeconfig
    assert parsed.secure_port_access.authorization_kubeconfig == kubeconfig


def test_deprecated_client_flags_apply_without_config_and_warn() -> None:
    parsed = options("--kube-api-qps=30", "--kube-api-burst=60", "--profiling=false")
    config = apply_flags(defaults(), parsed)
    assert (config.client_connection.qps, config.client_connection.burst) == (30.0, 60)
    assert config.enable_profiling is False
    assert parsed.compat.warnings == [
        "Flag --kube-api-qps has been deprecated",
        "Flag --kube-api-burst has been deprecated",
        "Flag --profiling has been deprecated",
    ]


def test_deprecated_client_flags_are_ignored_with_a_config_file(tmp_path: Path) -> None:
    parsed = options(f"--config={tmp_path / 'c.yaml'}", "--kube-api-qps=30")
    config = apply_flags(defaults(), parsed)
    assert config.client_connection.qps == 50.0
    assert parsed.compat.warnings == [
        "Flag --kube-api-qps has been deprecated and is ignored because --config is given"
    ]


def test_kubeconfig_applies_without_a_config_file_only(tmp_path: Path) -> None:
    config = defaults()
    connection = config.client_connection.model_copy(update={"kubeconfig": "f"})
    named = config.model_copy(update={"client_connection": connection})
    without = options("--kubeconfig=flag.yaml")
    assert apply_flags(named, without).client_connection.kubeconfig == "flag.yaml"
    assert without.compat.warnings == []
    with_file = options(f"--config={tmp_path / 'c.yaml'}", "--kubeconfig=flag.yaml")
    assert apply_flags(named, with_file).client_connection.kubeconfig == "f"
    assert with_file.compat.warnings == [
        "Flag --kubeconfig has been deprecated and is ignored because --config is given: "
        "the file's clientConnection.kubeconfig names the cluster"
    ]


def test_an_empty_config_or_write_config_to_is_not_given() -> None:
    parsed = options("--config=", "--write-config-to=")
    assert (parsed.config, parsed.write_config_to) == (None, None)


@pytest.mark.parametrize("with_file", [False, True])
@pytest.mark.parametrize(
    ("flag", "message"),
    [
        (
            "--leader-elect-retry-period=0s",
            'leaderElection.retryPeriod: Invalid value: "0s": must be greater than zero',
        ),
        (
            "--leader-elect-retry-period=-1s",
            'leaderElection.retryPeriod: Invalid value: "-1s": must be greater than zero',
        ),
        (
            "--leader-elect-renew-deadline=0s",
            'leaderElection.renewDeadline: Invalid value: "0s": must be greater than zero',
        ),
        (
            "--leader-elect-lease-duration=-15s",
            'leaderElection.leaseDuration: Invalid value: "-15s": must be greater than zero',
        ),
        ("--leader-elect-resource-name=", "leaderElection.resourceName: Required value"),
        ("--leader-elect-resource-namespace=", "leaderElection.resourceNamespace: Required value"),
    ],
)
def test_leader_election_flags_are_validated_as_the_file_is(
    tmp_path: Path, with_file: bool, flag: str, message: str
) -> None:
    argv = [f"--config={tmp_path / 'c.yaml'}"] if with_file else []
    with pytest.raises(ConfigError) as refused:
        apply_flags(defaults(), options(*argv, flag))
    assert message in str(refused.value).splitlines()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--tls-cert-file=a.crt"], "missing filename for serving cert"),
        (["--tls-private-key-file=a.key"], "missing filename for serving cert"),
        (
            ["--tls-cert-file=/no/such.crt", "--tls-private-key-file=/no/such.key"],
            "--tls-cert-file: cannot read /no/such.crt: No such file or directory",
        ),
    ],
)
def test_a_serving_pair_that_cannot_load_is_refused_by_name(argv: list[str], message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        apply_flags(defaults(), options(*argv))
    # As upstream, a port that is off reads neither file.
    apply_flags(defaults(), options("--secure-port=0", *argv))


def test_a_serving_key_that_is_no_key_is_refused(tmp_path: Path) -> None:
    pair = generate_self_signed("127.0.0.1", datetime.now(UTC))
    cert = tmp_path / "tls.crt"
    cert.write_bytes(pair.cert_chain_pem)
    parsed = options(f"--tls-cert-file={cert}", f"--tls-private-key-file={cert}")
    with pytest.raises(ConfigError, match=f"--tls-cert-file {re.escape(str(cert))} with"):
        apply_flags(defaults(), parsed)


def parse_error(capsys: pytest.CaptureFixture[str], flag: str) -> str:
    """The last line argparse prints for a command line it refuses (and exits 2)."""
    with pytest.raises(SystemExit) as exited:
        main([flag])
    assert exited.value.code == 2
    return capsys.readouterr().err.rstrip().splitlines()[-1]


@pytest.mark.parametrize("flag", ["--secure=0", "--leader-elect-lease=30s", "--tls-cert=a.crt"])
def test_a_long_flag_must_be_spelled_out(flag: str, capsys: pytest.CaptureFixture[str]) -> None:
    # pflag's words for a flag it does not know.
    assert parse_error(capsys, flag).endswith(f"unknown flag: {flag.partition('=')[0]}")


def test_an_unknown_shorthand_is_named_as_pflag_names_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert parse_error(capsys, "-x=1").endswith("unknown shorthand flag: 'x' in -x=1")


@pytest.mark.parametrize("argv", [["--leader-elect", "false"], ["stray"], ["--profiling", "true"]])
def test_a_bool_flag_takes_no_separate_value_and_run_takes_no_arguments(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    # As kube-scheduler: the bool is set by `--flag` or `--flag=value`; a word after it is an
    # argument, which the daemon refuses, rather than being read as the flag's value.
    with pytest.raises(SystemExit) as exited:
        main(["run", *argv])
    assert exited.value.code == 2
    said = capsys.readouterr().err.rstrip().splitlines()[-1]
    assert said.endswith(f'"kube-pyscheduler run" does not take any arguments, got ["{argv[-1]}"]')


def test_a_bare_bool_flag_is_true_and_leaves_the_next_flag_alone(tmp_path: Path) -> None:
    written = tmp_path / "effective.yaml"
    argv = ["--leader-elect", "--profiling", f"--write-config-to={written}", "--secure-port=0"]
    assert main(["--leader-elect=false", *argv]) == 0
    config = yaml.safe_load(written.read_text())
    assert config["leaderElection"]["leaderElect"] is True
    assert config["enableProfiling"] is True


@pytest.mark.parametrize("address", ["abc", "localhost", "[::1]"])
def test_a_bind_address_must_be_an_ip(address: str, capsys: pytest.CaptureFixture[str]) -> None:
    message = f'argument --bind-address: failed to parse IP: "{address}"'
    assert parse_error(capsys, f"--bind-address={address}").endswith(message)


def test_a_negative_verbosity_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    message = "argument -v/--v: expected a non-negative integer, got '-1'"
    assert parse_error(capsys, "-v=-1").endswith(message)


@pytest.mark.parametrize("value", ["yes", "no", "TrUe", "on", ""])
def test_a_bool_flag_takes_go_spellings_only(
    value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    message = (
        "argument --leader-elect: expected one of 1, t, T, TRUE, true, True, 0, f, F, FALSE, "
        f'false, False; got "{value}"'
    )
    assert parse_error(capsys, f"--leader-elect={value}").endswith(message)


@pytest.mark.parametrize(("value", "expected"), [("T", True), ("FALSE", False), ("0", False)])
def test_every_go_spelling_of_a_bool_is_taken(value: str, expected: bool) -> None:
    assert run_parser().parse_args([f"--profiling={value}"]).profiling is expected


@pytest.mark.parametrize(
    ("value", "expected"), [("", "0.0.0.0"), (" ::1 ", "::1"), ("10.0.0.1", "10.0.0.1")]
)
def test_the_bind_address_is_an_ip_and_empty_leaves_the_default(value: str, expected: str) -> None:
    assert options(f"--bind-address={value}").bind_address == expected


def test_flag_names_read_underscores_as_dashes(tmp_path: Path) -> None:
    written = tmp_path / "effective.yaml"
    argv = ["--leader_elect=false", "--kube_api_qps=5", f"--write_config_to={written}"]
    assert main([*argv, "--secure-port=0"]) == 0
    config = yaml.safe_load(written.read_text())
    assert config["leaderElection"]["leaderElect"] is False
    assert config["clientConnection"]["qps"] == 5


@pytest.mark.parametrize("value", ["0", "-1s"])
def test_a_log_flush_frequency_must_be_positive(value: str) -> None:
    with pytest.raises(ConfigError) as refused:
        options(f"--log-flush-frequency={value}")
    shown = "0s" if value == "0" else value
    expected = f'flushFrequency: Invalid value: "{shown}": Must be greater than zero'
    assert str(refused.value) == expected


def test_unschedulable_pool_limit_and_lock_apply() -> None:
    parsed = options(
        "--pod-max-in-unschedulable-pods-duration=90s", "--leader-elect-resource-lock=leases"
    )
    assert parsed.compat.max_in_unschedulable == 90.0
    assert apply_flags(defaults(), parsed).leader_election.resource_lock == "leases"
    assert parsed.compat.warnings == [
        "Flag --pod-max-in-unschedulable-pods-duration has been deprecated"
    ]


@pytest.mark.parametrize(
    "argv",
    [
        ["--feature-gates=SchedulerAsyncPreemption=true,kube:AllAlpha=false"],
        # How informers list is a client-side choice; the informers page either way.
        ["--feature-gates=WatchListClient=false"],
        ["--feature-gates=WatchListClient=true"],
        ["--emulated-version=1.36", "--min-compatibility-version=kube=1.36"],
        # Upstream's default, and any release down to three before: they change nothing here.
        ["--min-compatibility-version=1.35"],
        ["--min-compatibility-version=v1.33", "--min-compatibility-version=kube=1.34"],
        # Go's strconv.ParseBool spellings.
        ["--feature-gates=OpportunisticBatching=1,ComponentFlagz=t,ComponentStatusz=T"],
        ["--feature-gates=OpportunisticBatching=0,ComponentFlagz=f,ComponentStatusz=F"],
        ["--feature-gates=OpportunisticBatching=TRUE,ComponentFlagz=True,ComponentStatusz=true"],
        ["--feature-gates=OpportunisticBatching=FALSE,ComponentFlagz=False"],
        ["--disable-http2-serving", "--http2-max-streams-per-connection=100"],
        ["--log-flush-frequency=10s", "--vmodule=", "--log-text-split-stream=false"],
        ["--permit-address-sharing", "--permit-port-sharing=true"],
        ["--tls-curve-preferences=23"],
    ],
)
def test_flags_that_ask_for_what_we_do_are_accepted(argv: list[str]) -> None:
    options(*argv)


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--feature-gates=NoSuchGate=true"],
            "--feature-gates: unrecognized feature gate: NoSuchGate",
        ),
        (["--feature-gates=AllAlpha=true"], "--feature-gates: AllAlpha=true cannot apply"),
        # GA and locked: upstream's own words.
        (
            ["--feature-gates=SchedulerQueueingHints=false"],
            "--feature-gates: cannot set feature gate SchedulerQueueingHints to false, "
            "feature is locked to true",
        ),
        # Deprecated, not locked: upstream would turn it on; we implement its default only.
        (["--feature-gates=KMSv1=true"], "--feature-gates: KMSv1=true cannot apply"),
        (["--feature-gates=AllAlpha"], "--feature-gates: missing bool value"),
        (["--emulated-version=1.35"], "--emulated-version: 1.35 cannot apply"),
        (
            ["--min-compatibility-version=1.32"],
            "--min-compatibility-version: minCompatibilityVersion version 1.32 is not between "
            "[1.33, 1.36]",
        ),
        (
            ["--min-compatibility-version=1.37"],
            "--min-compatibility-version: minCompatibilityVersion version 1.37 is not between",
        ),
        (
            ["--min-compatibility-version=1.34.1"],
            "--min-compatibility-version: patch version not allowed, got: 1.34.1",
        ),
        (
            ["--feature-gates=OpportunisticBatching=tRuE"],
            "--feature-gates: invalid value of OpportunisticBatching=tRuE",
        ),
        (
            ["--feature-gates=OpportunisticBatching=yes"],
            "--feature-gates: invalid value of OpportunisticBatching=yes",
        ),
        (["--leader-elect-resource-lock=endpoints"], "--leader-elect-resource-lock: 'endpoints'"),
        (["--vmodule=sched*=4"], "--vmodule: cannot apply"),
        (["--tls-sni-cert-key=a.crt,a.key"], "--tls-sni-cert-key: cannot apply"),
        (["--disabled-metrics=x"], "--disabled-metrics: cannot apply"),
        (["--show-hidden-metrics-for-version=1.35"], "--show-hidden-metrics-for-version: cannot"),
        (["--log-json-split-stream"], "--log-json-split-stream: cannot apply"),
    ],
)
def test_flags_that_cannot_apply_fail_naming_themselves(argv: list[str], message: str) -> None:
    with pytest.raises(ConfigError, match=re.escape(message)):
        options(*argv)


def test_tls_curves_beyond_one_are_refused() -> None:
    with pytest.raises(ConfigError, match="--tls-curve-preferences: only one curve"):
        TLSOptions.from_flags("", [], [23, 29])
    assert TLSOptions.from_flags("", [], [29]).curve == "X25519"


def test_version_prints_ours_and_the_kubernetes_release(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--version"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("kube-pyscheduler v")
    assert lines[1] == "Kubernetes v1.36.3"


def test_help_shows_the_flags_of_run(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0
    text = capsys.readouterr().out
    assert text.startswith("usage: kube-pyscheduler run")
    assert "--authorization-always-allow-paths" in text and "validate-config" in text


def test_a_refused_flag_exits_2_with_its_name(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--vmodule=x=1"]) == 2
    assert capsys.readouterr().err.startswith("error: --vmodule: cannot apply")


def _extender_config(tmp_path: Path, url: str, field: str) -> Path:
    """A configuration with one filtering extender at `url` that also sets `field`."""
    config = tmp_path / "config.yaml"
    config.write_text(
        "apiVersion: kubescheduler.config.k8s.io/v1\n"
        "kind: KubeSchedulerConfiguration\n"
        f"extenders:\n- urlPrefix: {url}\n  filterVerb: filter\n  {field}\n"
    )
    return config


def test_extender_tls_settings_that_cannot_load_stop_start_up(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "missing.pem"
    config = _extender_config(
        tmp_path, "https://127.0.0.1:8888/", f"tlsConfig: {{caFile: {missing}}}"
    )
    assert main([f"--config={config}"]) == 2
    assert capsys.readouterr().err.startswith("error: extenders[0].tlsConfig: ")


def test_the_zpage_gates_are_honoured_both_ways() -> None:
    parsed = options("--feature-gates=ComponentFlagz=false,ComponentStatusz=true")
    gates = FeatureGates(parsed.compat.feature_gates)
    assert gates.enabled("ComponentFlagz") is False
    assert gates.enabled("ComponentStatusz") is True
    # Not given: v1.36's default, on.
    assert FeatureGates(options().compat.feature_gates).enabled("ComponentFlagz") is True


def test_flag_values_read_as_kube_schedulers_flag_library_writes_them() -> None:
    argv = [
        "run",
        "--leader-elect=false",
        "--authentication-token-webhook-cache-ttl=90s",
        "--requestheader-allowed-names=front,proxy",
        "--requestheader-allowed-names=edge",
        "--feature-gates=ComponentStatusz=true,ComponentFlagz=true",
        "--kube-api-qps=20",
    ]
    shown = flag_values(run_parser(), build_parser("run").parse_args(argv))
    assert shown["leader-elect"] == "false"
    assert shown["authentication-token-webhook-cache-ttl"] == "1m30s"
    assert shown["requestheader-allowed-names"] == "[front,proxy,edge]"
    assert shown["feature-gates"] == "ComponentFlagz=true,ComponentStatusz=true"
    assert shown["kube-api-qps"] == "20"
    # Not given: what kube-scheduler shows for its defaults.
    assert shown["leader-elect-lease-duration"] == "15s"
    assert shown["requestheader-group-headers"] == "[x-remote-group]"
    assert shown["tls-cipher-suites"] == "[]"
    assert shown["config"] == ""
    assert shown["help"] == shown["shadow"] == "false"
    assert list(shown) == sorted(shown)


@pytest.mark.parametrize("setting", [True, False])
def test_opportunistic_batching_is_honoured_both_ways(setting: bool) -> None:
    flag = f"--feature-gates=OpportunisticBatching={str(setting).lower()}"
    registry = PluginRegistry.discover()
    config, profiles = load_config_dict(config_with_profile("default-scheduler"), registry)
    clock = SystemClock()
    setup = SchedulerSetup(config, profiles, registry, SimCluster(clock=clock), clock)
    daemon = Daemon(setup, options=options(flag))
    assert daemon.scheduler.profiles["default-scheduler"].batch.enabled is setting


@pytest.mark.parametrize("setting", [True, False])
def test_toleration_comparison_operators_are_honoured_both_ways(setting: bool) -> None:
    gate = "TaintTolerationComparisonOperators"
    registry = PluginRegistry.discover()
    config, profiles = load_config_dict(config_with_profile("default-scheduler"), registry)
    clock = SystemClock()
    setup = SchedulerSetup(config, profiles, registry, SimCluster(clock=clock), clock)
    daemon = Daemon(setup, options=options(f"--feature-gates={gate}={str(setting).lower()}"))
    assert daemon.scheduler.profiles["default-scheduler"].handle.feature_enabled(gate) is setting


def test_ga_and_deprecated_gates_set_to_their_default_are_accepted_with_upstreams_warning() -> None:
    parsed = options(
        "--feature-gates=SchedulerQueueingHints=true,KMSv1=false,PodLevelResources=true"
    )
    assert parsed.compat.warnings == [
        "setting deprecated feature gate KMSv1=false. It will be removed in a future release.",
        "setting GA feature gate SchedulerQueueingHints=true. It will be removed in a future "
        "release.",
    ]


def test_every_known_gate_is_reported_with_its_stage_and_state() -> None:
    registry = PluginRegistry.discover()
    config, profiles = load_config_dict(config_with_profile("default-scheduler"), registry)
    clock = SystemClock()
    setup = SchedulerSetup(config, profiles, registry, SimCluster(clock=clock), clock)
    daemon = Daemon(setup, options=options("--feature-gates=OpportunisticBatching=false"))
    registry_ = daemon.metrics.registry

    def state(name: str, stage: str) -> float | None:
        labels = {"name": name, "stage": stage}
        return registry_.get_sample_value("kubernetes_feature_enabled", labels)

    assert state("OpportunisticBatching", "BETA") == 0
    assert state("SchedulerAsyncPreemption", "BETA") == 1
    assert state("GangScheduling", "ALPHA") == 0
    # GA gates carry no stage, as component-base labels them.
    assert state("SchedulerQueueingHints", "") == 1
    assert state("GitRepoVolumeDriver", "DEPRECATED") == 0
    series = [
        sample
        for family in registry_.collect()
        if family.name == "kubernetes_feature_enabled"
        for sample in family.samples
    ]
    # kube-scheduler v1.36.3 reports 241 gates: 49 alpha, 100 beta, 76 GA, 16 deprecated.
    assert len(series) == 241


@pytest.mark.parametrize("port", [0, 1, 10259, 65535])
def test_the_secure_port_may_be_any_tcp_port_or_0_for_off(port: int) -> None:
    check_secure_port(port)


@pytest.mark.parametrize("port", [-1, 65536])
def test_a_secure_port_out_of_range_is_refused_in_upstreams_words(port: int) -> None:
    config, _ = load_config_dict(
        config_with_profile("default-scheduler"), PluginRegistry.discover()
    )
    with pytest.raises(ConfigError) as refused:
        apply_flags(config, RunOptions(secure_port=port))
    assert str(refused.value) == (
        f"--secure-port {port} must be between 0 and 65535, inclusive. "
        "0 for turning off secure port"
    )
