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
    with pytest.raises(ConfigError, match=r"^typo: Extra inputs are not permitted$"):
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
