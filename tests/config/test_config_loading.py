"""Loading from files and text, and writing the effective configuration back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from scheduler.config import API_VERSION
from scheduler.config import ConfigError
from scheduler.config import EffectiveProfile
from scheduler.config import default_config
from scheduler.config import dump_config
from scheduler.config import load_config_file
from scheduler.config import load_config_text
from scheduler.framework import PluginSpec
from tests.data import MULTI_PROFILE

CUSTOMISED = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
parallelism: 8
percentageOfNodesToScore: 40
podInitialBackoffSeconds: 2
podMaxBackoffSeconds: 30
enableProfiling: false
delayCacheUntilActive: true
leaderElection:
  leaseDuration: 1m30s
  renewDeadline: 45s
  retryPeriod: 1500ms
  resourceName: py-scheduler
clientConnection:
  kubeconfig: /etc/kubernetes/scheduler.conf
  qps: 200.5
  burst: 400
extenders:
  - urlPrefix: http://127.0.0.1:8888/
    filterVerb: filter
    prioritizeVerb: prioritize
    weight: 3
    httpTimeout: 2s
    managedResources:
      - name: example.com/gpu
        ignoredByScheduler: true
profiles:
  - schedulerName: custom
    percentageOfNodesToScore: 70
    plugins:
      multiPoint:
        enabled:
          - name: CustomReserve
          - name: TaintToleration
            weight: 5
        disabled:
          - name: ImageLocality
      queueSort:
        enabled: [{name: CustomSort}]
        disabled: [{name: "*"}]
      score:
        enabled: [{name: CustomScore, weight: 4}]
      permit:
        disabled: [{name: CustomReserve}]
    pluginConfig:
      - name: CustomSort
        args: {order: fifo}
      - name: NodeResourcesFit
        args:
          scoringStrategy:
            type: MostAllocated
            resources: [{name: cpu, weight: 2}]
"""


def score_of(profile: EffectiveProfile, name: str) -> int:
    [weight] = [ref.weight for ref in profile.plugins["Score"] if ref.name == name]
    return weight


def test_multi_profile_config(registry: dict[str, PluginSpec]) -> None:
    config, (default, foo) = load_config_text(MULTI_PROFILE, registry)
    assert [p.scheduler_name for p in config.profiles] == ["default-scheduler", "foo-scheduler"]
    assert (default.scheduler_name, foo.scheduler_name) == ("default-scheduler", "foo-scheduler")
    # An explicit Score entry with weight 0 replaces the multiPoint weight 2 and means 1.
    assert score_of(foo, "InterPodAffinity") == 1
    assert score_of(default, "InterPodAffinity") == 2
    assert foo.plugins["Score"][0].name == "InterPodAffinity"
    foo_affinity = foo.plugin_args["NodeAffinity"]
    default_affinity = default.plugin_args["NodeAffinity"]
    assert foo_affinity is not None and default_affinity is not None
    terms = foo_affinity.model_dump()["added_affinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"
    ]["nodeSelectorTerms"]
    assert terms[0]["matchExpressions"][0]["values"] == ["foo"]
    assert default_affinity.model_dump()["added_affinity"] is None


def test_json_text_loads_like_yaml(registry: dict[str, PluginSpec]) -> None:
    as_json = json.dumps(yaml.safe_load(MULTI_PROFILE), indent="\t")
    assert load_config_text(as_json, registry) == load_config_text(MULTI_PROFILE, registry)


def test_load_config_file(registry: dict[str, PluginSpec], tmp_path: Path) -> None:
    path = tmp_path / "scheduler.yaml"
    path.write_text(CUSTOMISED, encoding="utf-8")
    config, [profile] = load_config_file(path, registry)
    assert config.leader_election.lease_duration == 90.0
    assert config.leader_election.retry_period == 1.5
    assert config.enable_contention_profiling is False
    assert config.extenders[0].http_timeout == 2.0
    assert [ref.name for ref in profile.plugins["QueueSort"]] == ["CustomSort"]
    assert [ref.name for ref in profile.plugins["Reserve"]] == ["CustomReserve"]
    assert profile.plugins["Permit"] == ()
    assert [(ref.name, ref.weight) for ref in profile.plugins["Score"]] == [
        ("TaintToleration", 5),
        ("NodeAffinity", 2),
        ("NodeResourcesFit", 1),
        ("InterPodAffinity", 2),
        ("CustomScore", 4),
    ]
    fit = profile.plugin_args["NodeResourcesFit"]
    assert fit is not None
    assert fit.model_dump(by_alias=True)["scoringStrategy"] == {
        "type": "MostAllocated",
        "resources": [{"name": "cpu", "weight": 2}],
    }


def test_missing_file_is_a_config_error(registry: dict[str, PluginSpec], tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"absent\.yaml"):
        load_config_file(tmp_path / "absent.yaml", registry)


@pytest.mark.parametrize(
    ("text", "location"),
    [
        ("apiVersion: v1\nkind: [\n", ":3:"),
        ("apiVersion: v1\nkind: a: b\n", ":2:"),
        ("apiVersion: v1\nparallelism: 1\nparallelism: 2\n", ":3:"),
        ('{\n  "apiVersion": "v1",\n  "kind": \n}', ":4:"),
    ],
    ids=["unclosed-flow", "nested-mapping-on-one-line", "duplicate-key", "json"],
)
def test_parse_error_names_file_and_line(
    registry: dict[str, PluginSpec], tmp_path: Path, text: str, location: str
) -> None:
    path = tmp_path / "broken.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError) as caught:
        load_config_file(path, registry)
    assert str(caught.value).startswith(f"{path}{location}")


def test_document_must_be_a_mapping(registry: dict[str, PluginSpec]) -> None:
    with pytest.raises(ConfigError, match="must be a mapping"):
        load_config_text("- a\n- b\n", registry)


@pytest.mark.parametrize("text", ["", MULTI_PROFILE, CUSTOMISED], ids=["none", "multi", "custom"])
def test_dump_loads_back_to_an_equal_result(registry: dict[str, PluginSpec], text: str) -> None:
    loaded = load_config_text(text, registry) if text else default_config(registry)
    dumped = dump_config(*loaded)
    again = load_config_text(dumped, registry)
    assert again == loaded
    assert dump_config(*again) == dumped


def test_dump_writes_what_write_config_to_writes(registry: dict[str, PluginSpec]) -> None:
    document = yaml.safe_load(dump_config(*load_config_text(CUSTOMISED, registry)))
    assert document["leaderElection"]["leaseDuration"] == "1m30s"
    assert document["leaderElection"]["retryPeriod"] == "1.5s"
    assert document["extenders"][0]["httpTimeout"] == "2s"
    assert document["enableContentionProfiling"] is False
    [profile] = document["profiles"]
    configs = {entry["name"]: entry["args"] for entry in profile["pluginConfig"]}
    # The user's entries first, then defaults for the other instantiated plugins with args.
    assert [entry["name"] for entry in profile["pluginConfig"]] == [
        "CustomSort",
        "NodeResourcesFit",
        "DefaultPreemption",
        "InterPodAffinity",
        "NodeAffinity",
    ]
    for name, args in configs.items():
        assert (args["apiVersion"], args["kind"]) == (API_VERSION, f"{name}Args")
    # The resources an extender manages and the scheduler ignores, as upstream writes them.
    assert configs["NodeResourcesFit"]["ignoredResources"] == ["example.com/gpu"]
    assert configs["DefaultPreemption"]["minCandidateNodesPercentage"] == 10
    multi_point = [entry["name"] for entry in profile["plugins"]["multiPoint"]["enabled"]]
    assert multi_point[0] == "SchedulingGates"
    assert "ImageLocality" not in multi_point
    assert multi_point[-1] == "CustomReserve"
    assert profile["plugins"]["multiPoint"]["disabled"] == [{"name": "ImageLocality"}]


def test_null_fields_read_as_unset(registry: dict[str, PluginSpec]) -> None:
    text = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
leaderElection:
extenders:
profiles:
  - schedulerName: only
    plugins:
    pluginConfig:
"""
    config, [profile] = load_config_text(text, registry)
    assert config.leader_election.lease_duration == 15.0
    assert config.extenders == []
    assert profile.scheduler_name == "only"
    assert [ref.name for ref in profile.plugins["Bind"]] == ["DefaultBinder"]


def test_null_unknown_field_is_still_rejected(registry: dict[str, PluginSpec]) -> None:
    text = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\ntypo:\n"
    with pytest.raises(ConfigError, match=r'^strict decoding error: unknown field "typo"$'):
        load_config_text(text, registry)


# One extender at a local URL; a test appends its fields (and what follows the list).
EXTENDER_HEADER = (
    "apiVersion: kubescheduler.config.k8s.io/v1\n"
    "kind: KubeSchedulerConfiguration\n"
    "extenders:\n"
    "- urlPrefix: http://127.0.0.1:8888\n"
)


def test_an_extender_without_http_timeout_gets_upstream_s_five_seconds(
    registry: dict[str, PluginSpec],
) -> None:
    text = EXTENDER_HEADER + "  filterVerb: filter\n"
    config, profiles = load_config_text(text, registry)
    assert config.extenders[0].http_timeout == 5.0
    assert yaml.safe_load(dump_config(config, profiles))["extenders"][0]["httpTimeout"] == "5s"
    # Nothing is ignored by NodeResourcesFit unless an extender says so.
    assert not profiles[0].plugin_args["NodeResourcesFit"].ignored_resources  # type: ignore[union-attr]


def test_ignored_resources_need_node_resources_fit_in_every_profile(
    registry: dict[str, PluginSpec],
) -> None:
    text = EXTENDER_HEADER + (
        "  managedResources: [{name: example.com/gpu, ignoredByScheduler: true}]\n"
        "profiles:\n"
        "- schedulerName: a\n"
        "- schedulerName: b\n"
        "  plugins: {multiPoint: {disabled: [{name: NodeResourcesFit}]}}\n"
    )
    with pytest.raises(ConfigError) as refused:
        load_config_text(text, registry)
    assert str(refused.value).endswith(
        'profiles[1].pluginConfig: Invalid value: "NodeResourcesFit": can\'t find '
        "NodeResourcesFitArgs in plugin config; extenders ignore resources through it"
    )


HEADER_YAML = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("percentage_of_nodes_to_score: 50\n", "percentage_of_nodes_to_score"),
        ("percentage_of_nodes_to_score:\n", "percentage_of_nodes_to_score"),
        ("leaderElection: {leader_elect: false}\n", "leaderElection.leader_elect"),
        (
            "profiles:\n- schedulerName: a\n  pluginConfig:\n  - name: InterPodAffinity\n"
            "    args: {hard_pod_affinity_weight: 5}\n",
            "profiles[0].pluginConfig[0].args.hard_pod_affinity_weight",
        ),
        (
            "extenders:\n- urlPrefix: http://127.0.0.1:8888\n  tlsConfig: {ca_data: ''}\n",
            "extenders[0].tlsConfig.ca_data",
        ),
    ],
    ids=["top-level", "top-level-null", "nested", "plugin-args", "extender"],
)
def test_snake_case_names_are_unknown_fields(
    registry: dict[str, PluginSpec], text: str, field: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config_text(HEADER_YAML + text, registry)
    assert str(caught.value) == f'strict decoding error: unknown field "{field}"'


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("1: x\n", "1"),
        ("profiles:\n- schedulerName: a\n  yes: 1\n", "profiles[0].true"),
        ("leaderElection: {n: 1, 1.5: 2}\n", "leaderElection.false"),
    ],
    ids=["integer", "boolean", "boolean-and-float"],
)
def test_keys_that_are_not_strings_are_unknown_fields_named_as_upstream_names_them(
    registry: dict[str, PluginSpec], text: str, field: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config_text(HEADER_YAML + text, registry)
    assert f'strict decoding error: unknown field "{field}"' in str(caught.value).splitlines()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("profiles: [{schedulerName: '1:30'}]\nparallelism: 0o17\n", ("1:30", 15, True)),
        ("profiles: [{schedulerName: 1:30}]\nparallelism: 1e1\n", ("1:30", 10, True)),
        (
            "profiles: [{schedulerName: 2024-01-01}]\nenableProfiling: n\n",
            ("2024-01-01", 16, False),
        ),
        (
            "profiles: [{schedulerName: =}]\nparallelism: 50.0\nenableProfiling: off\n",
            ("=", 50, False),
        ),
    ],
    ids=["quoted-and-octal", "base-60-and-exponent", "date-and-n", "equals-and-whole-float"],
)
def test_yaml_scalars_are_read_as_upstream_reads_them(
    registry: dict[str, PluginSpec], text: str, expected: tuple[str, int, bool]
) -> None:
    config, _ = load_config_text(HEADER_YAML + text, registry)
    name = config.profiles[0].scheduler_name
    assert (name, config.parallelism, config.enable_profiling) == expected


@pytest.mark.parametrize(
    ("text", "detail"),
    [
        (
            "profiles: [{schedulerName: y}]\n",
            "profiles[0].schedulerName: Input should be a valid string",
        ),
        ("parallelism: 1:30\n", "parallelism: Input should be a valid integer"),
        ("parallelism: 16.5\n", "parallelism: Input should be a valid integer"),
        (
            "clientConnection: {qps: 1e400}\n",
            "clientConnection.qps: Input should be a valid number",
        ),
    ],
    ids=["y-is-a-boolean", "base-60-is-a-string", "fraction", "overflowing-float-is-a-string"],
)
def test_yaml_scalars_upstream_reads_as_another_type_are_refused(
    registry: dict[str, PluginSpec], text: str, detail: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config_text(HEADER_YAML + text, registry)
    assert str(caught.value) == detail


def test_a_whole_float_fills_an_integer_field_from_yaml_only(
    registry: dict[str, PluginSpec],
) -> None:
    config, _ = load_config_text(HEADER_YAML + "percentageOfNodesToScore: 50.0\n", registry)
    assert config.percentage_of_nodes_to_score == 50
    as_json = json.dumps({**yaml.safe_load(HEADER_YAML), "percentageOfNodesToScore": 50.0})
    with pytest.raises(ConfigError, match="percentageOfNodesToScore: Input should be a valid"):
        load_config_text(as_json, registry)


def test_strings_upstream_would_read_as_other_types_are_quoted_when_dumped(
    registry: dict[str, PluginSpec],
) -> None:
    text = HEADER_YAML + "profiles:\n- schedulerName: 'y'\n- schedulerName: '1e2'\n"
    loaded = load_config_text(text, registry)
    dumped = dump_config(*loaded)
    assert "schedulerName: 'y'" in dumped and "schedulerName: '1e2'" in dumped
    assert load_config_text(dumped, registry) == loaded


@pytest.mark.parametrize(
    "trailer", ["---\n", "---\n# nothing more\n", "---\n---\n", "...\n"], ids=str.strip
)
def test_empty_documents_after_the_configuration_are_ignored(
    registry: dict[str, PluginSpec], trailer: str
) -> None:
    config, _ = load_config_text(HEADER_YAML + "parallelism: 4\n" + trailer, registry)
    assert config.parallelism == 4


@pytest.mark.parametrize("second", ["foo: bar\n", HEADER_YAML], ids=["other", "configuration"])
def test_a_second_document_with_content_is_refused(
    registry: dict[str, PluginSpec], second: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        load_config_text(HEADER_YAML + "---\n" + second, registry, source="f.yaml")
    assert str(caught.value) == (
        "f.yaml: holds 2 YAML documents; a configuration file holds one "
        "(kube-scheduler would read the first and ignore the others)"
    )


@pytest.mark.parametrize("field", ["caData", "certData", "keyData"])
def test_extender_tls_data_must_be_base64(registry: dict[str, PluginSpec], field: str) -> None:
    text = EXTENDER_HEADER + f"  tlsConfig: {{{field}: 'not base64!!'}}\n"
    with pytest.raises(ConfigError) as caught:
        load_config_text(text, registry)
    assert str(caught.value).startswith(f"extenders[0].tlsConfig.{field}: not valid base64: ")


def test_extender_tls_data_may_break_lines_as_go_allows(registry: dict[str, PluginSpec]) -> None:
    text = EXTENDER_HEADER + "  tlsConfig:\n    caData: |\n      QUJD\n      REVG\n"
    config, _ = load_config_text(text, registry)
    tls = config.extenders[0].tls_config
    assert tls is not None and tls.ca_data == "QUJD\nREVG\n"
