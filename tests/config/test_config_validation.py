"""Validation of the configuration's own fields: each problem is reported at its field path."""

from __future__ import annotations

from typing import Any

import pytest

from scheduler.config import API_VERSION
from scheduler.config import KIND
from scheduler.config import ConfigError
from scheduler.config import load_config_dict
from scheduler.config.models import ClientConnectionConfiguration
from scheduler.config.models import KubeSchedulerConfiguration
from scheduler.config.models import LeaderElectionConfiguration
from scheduler.config.validation import validate_configuration
from scheduler.framework import PluginSpec

HEADER = {"apiVersion": API_VERSION, "kind": KIND}


def problems(registry: dict[str, PluginSpec], data: dict[str, Any]) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_config_dict(data, registry)
    return str(caught.value).splitlines()


def profile(**fields: Any) -> dict[str, Any]:
    return {**HEADER, "profiles": [fields]}


def plugins(**sets: Any) -> dict[str, Any]:
    return profile(plugins=sets)


def names(*plugin_names: str) -> list[dict[str, str]]:
    return [{"name": name} for name in plugin_names]


CASES: list[tuple[str, dict[str, Any], str]] = [
    # Type meta.
    (
        "wrong-api-version",
        {**HEADER, "apiVersion": "kubescheduler.config.k8s.io/v1beta3"},
        'apiVersion: Unsupported value: "kubescheduler.config.k8s.io/v1beta3": '
        'supported values: "kubescheduler.config.k8s.io/v1"',
    ),
    (
        "wrong-kind",
        {**HEADER, "kind": "Policy"},
        'kind: Unsupported value: "Policy": supported values: "KubeSchedulerConfiguration"',
    ),
    ("missing-kind", {"apiVersion": API_VERSION}, "kind: Required value"),
    # Structure.
    (
        "unknown-top-level-field",
        {**HEADER, "hardPodAffinityWeight": 1},
        'strict decoding error: unknown field "hardPodAffinityWeight"',
    ),
    (
        "unknown-nested-field",
        plugins(score={"enabled": [{"name": "ImageLocality", "wieght": 2}]}),
        'strict decoding error: unknown field "profiles[0].plugins.score.enabled[0].wieght"',
    ),
    (
        "unknown-leader-election-field",
        {**HEADER, "leaderElection": {"leaseDurationSeconds": 15}},
        'strict decoding error: unknown field "leaderElection.leaseDurationSeconds"',
    ),
    (
        "quoted-number",
        {**HEADER, "parallelism": "16"},
        "parallelism: Input should be a valid integer",
    ),
    (
        "weight-beyond-int32",
        plugins(score={"enabled": [{"name": "ImageLocality", "weight": 2**31}]}),
        "profiles[0].plugins.score.enabled[0].weight: Input should be less than or equal to",
    ),
    (
        "duration-as-number",
        {**HEADER, "leaderElection": {"leaseDuration": 15}},
        "leaderElection.leaseDuration: must be a duration string",
    ),
    (
        "bad-duration",
        {**HEADER, "leaderElection": {"renewDeadline": "10 seconds"}},
        'leaderElection.renewDeadline: time: unknown unit " seconds" in duration "10 seconds"',
    ),
    (
        "plugin-config-without-name",
        profile(pluginConfig=[{"args": {}}]),
        "profiles[0].pluginConfig[0].name: Field required",
    ),
    # Top-level fields.
    (
        "parallelism",
        {**HEADER, "parallelism": 0},
        "parallelism: Invalid value: 0: should be an integer value greater than zero",
    ),
    (
        "percentage-global",
        {**HEADER, "percentageOfNodesToScore": 101},
        "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]",
    ),
    (
        "percentage-profile",
        profile(percentageOfNodesToScore=-1),
        "profiles[0].percentageOfNodesToScore: Invalid value: -1: not in valid range [0-100]",
    ),
    (
        "initial-backoff",
        {**HEADER, "podInitialBackoffSeconds": 0},
        "podInitialBackoffSeconds: Invalid value: 0: must be greater than 0",
    ),
    (
        "max-backoff-below-initial",
        {**HEADER, "podInitialBackoffSeconds": 5, "podMaxBackoffSeconds": 4},
        "podMaxBackoffSeconds: Invalid value: 4: "
        "must be greater than or equal to PodInitialBackoffSeconds",
    ),
    (
        "resource-lock",
        {**HEADER, "leaderElection": {"resourceLock": "endpoints"}},
        'leaderElection.resourceLock: Invalid value: "endpoints": '
        'resourceLock value must be "leases"',
    ),
    (
        # Upstream shows the renew deadline as the value, not the lease duration.
        "lease-not-longer-than-renew",
        {**HEADER, "leaderElection": {"leaseDuration": "5s"}},
        'leaderElection.leaseDuration: Invalid value: "10s": must be greater than `RenewDeadline`',
    ),
    (
        "retry-period",
        {**HEADER, "leaderElection": {"retryPeriod": "-1s"}},
        'leaderElection.retryPeriod: Invalid value: "-1s": must be greater than zero',
    ),
    (
        "burst",
        {**HEADER, "clientConnection": {"burst": -1}},
        "clientConnection.burst: Invalid value: -1: must be non-negative",
    ),
    # Extenders.
    (
        "prioritizing-extender-weight",
        {**HEADER, "extenders": [{"urlPrefix": "http://x", "prioritizeVerb": "prioritize"}]},
        "extenders[0].weight: Invalid value: 0: must have a positive weight applied to it",
    ),
    (
        "two-binding-extenders",
        {**HEADER, "extenders": [{"bindVerb": "bind"}, {"bindVerb": "bind"}]},
        'extenders: Invalid value: "found 2 extenders implementing bind": '
        "only one extender can implement bind",
    ),
    (
        "managed-resource-not-extended",
        {**HEADER, "extenders": [{"managedResources": [{"name": "cpu"}]}]},
        'extenders[0].managedResources[0].name: Invalid value: "cpu": '
        "is an invalid extended resource name",
    ),
    (
        "managed-resource-native-domain",
        {**HEADER, "extenders": [{"managedResources": [{"name": "kubernetes.io/gpu"}]}]},
        'extenders[0].managedResources[0].name: Invalid value: "kubernetes.io/gpu": '
        "is an invalid extended resource name",
    ),
    (
        "managed-resource-bad-name",
        {**HEADER, "extenders": [{"managedResources": [{"name": "example.com/a b"}]}]},
        'extenders[0].managedResources[0].name: Invalid value: "example.com/a b": name part',
    ),
    (
        "managed-resource-with-two-slashes",
        {**HEADER, "extenders": [{"managedResources": [{"name": "example.com/a/b"}]}]},
        'extenders[0].managedResources[0].name: Invalid value: "example.com/a/b": '
        "a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must "
        "start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
        "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') "
        "with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ),
    (
        "managed-resource-duplicate",
        {
            **HEADER,
            "extenders": [
                {"managedResources": [{"name": "example.com/gpu"}]},
                {"managedResources": [{"name": "example.com/gpu"}]},
            ],
        },
        'extenders[1].managedResources[0].name: Invalid value: "example.com/gpu": '
        "duplicate extender managed resource name",
    ),
    # Profiles.
    (
        "unnamed-profile-among-several",
        {**HEADER, "profiles": [{"schedulerName": "a"}, {}]},
        "profiles[1].schedulerName: Required value",
    ),
    (
        "empty-name",
        profile(schedulerName=""),
        "profiles[0].schedulerName: Required value",
    ),
    (
        "duplicate-name",
        {**HEADER, "profiles": [{"schedulerName": "x"}, {"schedulerName": "x"}]},
        'profiles[1].schedulerName: Duplicate value: "x"',
    ),
]


@pytest.mark.parametrize(
    ("data", "expected"), [case[1:] for case in CASES], ids=[case[0] for case in CASES]
)
def test_problem_is_reported_at_its_path(
    registry: dict[str, PluginSpec], data: dict[str, Any], expected: str
) -> None:
    lines = problems(registry, data)
    assert any(line.startswith(expected) for line in lines), lines


def test_all_problems_are_reported_together(registry: dict[str, PluginSpec]) -> None:
    data = {
        **HEADER,
        "parallelism": -2,
        "podInitialBackoffSeconds": 0,
        "profiles": [
            {"schedulerName": "a", "plugins": {"score": {"enabled": names("Foo")}}},
            {
                "schedulerName": "a",
                "pluginConfig": [
                    {"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 101}}
                ],
            },
        ],
    }
    lines = problems(registry, data)
    paths = [line.split(": ", 1)[0] for line in lines]
    assert paths == [
        "parallelism",
        "podInitialBackoffSeconds",
        "profiles[1].schedulerName",
        "profiles[0].plugins.score.enabled[0].name",
        "profiles[1].pluginConfig[0].args.hardPodAffinityWeight",
    ]


def test_structural_problems_are_all_reported(registry: dict[str, PluginSpec]) -> None:
    data = {**HEADER, "parallelism": "x", "leaderElection": {"leaderElect": "yes"}, "typo": 1}
    lines = problems(registry, data)
    paths = {line.split(": ", 1)[0] for line in lines}
    assert paths == {"parallelism", "leaderElection.leaderElect", "strict decoding error"}
    assert 'strict decoding error: unknown field "typo"' in lines


def test_leader_election_rules_apply_only_when_electing(registry: dict[str, PluginSpec]) -> None:
    data = {**HEADER, "leaderElection": {"leaderElect": False, "resourceLock": "endpoints"}}
    config, _ = load_config_dict(data, registry)
    assert config.leader_election.resource_lock == "endpoints"


def test_profiles_are_required() -> None:
    # Loading defaults an empty list to one profile, so only a built config can lack one.
    lines = [str(p) for p in validate_configuration(KubeSchedulerConfiguration(profiles=[]))]
    assert lines == ["profiles: Required value: at least one profile is required"]


def test_zero_or_empty_connection_and_election_values_get_the_defaults(
    registry: dict[str, PluginSpec],
) -> None:
    # Upstream defaults a field whenever it holds its zero value, not only when it is absent.
    data = {
        **HEADER,
        "leaderElection": {
            "leaseDuration": "0s",
            "renewDeadline": "0s",
            "retryPeriod": "0s",
            "resourceLock": "",
            "resourceName": "",
            "resourceNamespace": "",
        },
        "clientConnection": {"qps": 0, "burst": 0, "contentType": ""},
    }
    config, _ = load_config_dict(data, registry)
    assert config.leader_election == LeaderElectionConfiguration()
    assert config.client_connection == ClientConnectionConfiguration()
    assert config.leader_election.lease_duration == 15.0
    assert config.client_connection.content_type == "application/vnd.kubernetes.protobuf"


def test_negative_connection_and_election_values_are_still_refused(
    registry: dict[str, PluginSpec],
) -> None:
    data = {
        **HEADER,
        "leaderElection": {"leaseDuration": "-5s", "renewDeadline": "0s", "retryPeriod": "-1s"},
        "clientConnection": {"qps": -1, "burst": -1},
    }
    assert problems(registry, data) == [
        "clientConnection.burst: Invalid value: -1: must be non-negative",
        'leaderElection.leaseDuration: Invalid value: "-5s": must be greater than zero',
        'leaderElection.retryPeriod: Invalid value: "-1s": must be greater than zero',
        'leaderElection.leaseDuration: Invalid value: "10s": must be greater than `RenewDeadline`',
    ]


def test_empty_election_names_set_after_defaulting_are_required() -> None:
    # Flags can empty these after the file was defaulted; the texts are upstream's.
    config = KubeSchedulerConfiguration()
    election = config.leader_election.model_copy(
        update={"resource_lock": "", "resource_name": "", "resource_namespace": ""}
    )
    config = config.model_copy(update={"leader_election": election})
    lines = [str(p) for p in validate_configuration(config) if "leaderElection" in str(p)]
    assert lines == [
        "leaderElection.resourceLock: Required value",
        "leaderElection.resourceNamespace: Required value",
        "leaderElection.resourceName: Required value",
        'leaderElection.resourceLock: Invalid value: "": resourceLock value must be "leases"',
    ]
