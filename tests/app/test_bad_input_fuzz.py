"""Fuzzing `validate-config` and `simulate` with valid documents made bad.

Each case starts from a valid configuration or scenario, changes one to three places in its tree
(values of the wrong type, numbers past every Go width, quantities beyond int64, nesting past
the reader's bound, alias bombs and alias cycles, unknown fields, removed fields), writes it as
YAML or JSON, and may then damage the bytes (invalid UTF-8, control characters, a cut, a
repeated line). Whatever comes out, the command must end as `tests.app.bad_input` requires:
exit 0 or 2, no traceback, one error naming a path, within the CPU and memory budgets.

FUZZ_EXAMPLES sets the number of configurations (default 1,500); scenarios are two fifths of
that, since one that stays valid runs a whole simulation.
"""

from __future__ import annotations

import copy
import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from scheduler.runtime.discovery import PluginRegistry
from tests.app.bad_input import assert_clean_ending
from tests.app.bad_input import run_cli
from tests.app.bad_input import use_registry
from tests.app.bad_input import warm_up

# Configurations are cheap to check; a scenario that stays valid runs a whole simulation.
CONFIG_EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "1500"))
SCENARIO_EXAMPLES = CONFIG_EXAMPLES * 2 // 5


def _fuzz(examples: int) -> settings:
    return settings(
        max_examples=examples,
        deadline=None,  # the per-case bounds are checked by the test itself
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


CONFIG: dict[str, Any] = {
    "apiVersion": "kubescheduler.config.k8s.io/v1",
    "kind": "KubeSchedulerConfiguration",
    "parallelism": 16,
    "percentageOfNodesToScore": 0,
    "podInitialBackoffSeconds": 1,
    "podMaxBackoffSeconds": 10,
    "leaderElection": {"leaderElect": True, "leaseDuration": "15s", "renewDeadline": "10s"},
    "clientConnection": {"qps": 50.0, "burst": 100},
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": {"score": {"enabled": [{"name": "InterPodAffinity", "weight": 2}]}},
            "pluginConfig": [
                {"name": "InterPodAffinity", "args": {"hardPodAffinityWeight": 1}},
                {
                    "name": "NodeResourcesFit",
                    "args": {
                        "ignoredResources": ["example.com/foo"],
                        "scoringStrategy": {
                            "type": "RequestedToCapacityRatio",
                            "resources": [{"name": "cpu", "weight": 1}],
                            "requestedToCapacityRatio": {
                                "shape": [
                                    {"utilization": 0, "score": 0},
                                    {"utilization": 100, "score": 10},
                                ]
                            },
                        },
                    },
                },
                {
                    "name": "PodTopologySpread",
                    "args": {
                        "defaultingType": "List",
                        "defaultConstraints": [
                            {
                                "maxSkew": 1,
                                "topologyKey": "topology.kubernetes.io/zone",
                                "whenUnsatisfiable": "ScheduleAnyway",
                            }
                        ],
                    },
                },
                {
                    "name": "DefaultPreemption",
                    "args": {"minCandidateNodesPercentage": 10, "minCandidateNodesAbsolute": 100},
                },
                {"name": "VolumeBinding", "args": {"bindTimeoutSeconds": 600}},
                {
                    "name": "NodeAffinity",
                    "args": {
                        "addedAffinity": {
                            "preferredDuringSchedulingIgnoredDuringExecution": [
                                {
                                    "weight": 5,
                                    "preference": {
                                        "matchExpressions": [
                                            {"key": "disk", "operator": "In", "values": ["ssd"]}
                                        ]
                                    },
                                }
                            ]
                        }
                    },
                },
            ],
        },
        {"schedulerName": "second"},
    ],
}

SCENARIO: list[dict[str, Any]] = [
    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "shop"}},
    *(
        {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": f"n{i}",
                "labels": {"topology.kubernetes.io/zone": f"z{i}", "disk": "ssd"},
            },
            "spec": {"taints": [{"key": "gpu", "value": "yes", "effect": "NoSchedule"}] * i},
            "status": {
                "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "10"},
                "images": [{"names": ["nginx:1"], "sizeBytes": 1000}],
            },
        }
        for i in range(2)
    ),
    {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "web", "namespace": "shop", "labels": {"app": "web"}},
        "spec": {
            "priority": 10,
            "containers": [
                {
                    "name": "c",
                    "image": "nginx:1",
                    "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}},
                    "ports": [{"containerPort": 80, "hostPort": 8080}],
                }
            ],
            "initContainers": [
                {"name": "i", "image": "x", "resources": {"requests": {"cpu": "1"}}}
            ],
            "tolerations": [{"key": "gpu", "operator": "Exists"}],
            "affinity": {
                "podAntiAffinity": {
                    "preferredDuringSchedulingIgnoredDuringExecution": [
                        {
                            "weight": 10,
                            "podAffinityTerm": {
                                "labelSelector": {"matchLabels": {"app": "web"}},
                                "topologyKey": "kubernetes.io/hostname",
                            },
                        }
                    ]
                }
            },
            "topologySpreadConstraints": [
                {
                    "maxSkew": 1,
                    "topologyKey": "topology.kubernetes.io/zone",
                    "whenUnsatisfiable": "DoNotSchedule",
                    "labelSelector": {"matchLabels": {"app": "web"}},
                }
            ],
        },
    },
    {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "db"},
        "spec": {
            "nodeSelector": {"disk": "ssd"},
            "containers": [
                {"name": "c", "image": "x", "resources": {"requests": {"memory": "2Gi"}}}
            ],
        },
    },
]

# Values that are wrong for nearly any field, and numbers past every width upstream uses.
WRONG_TYPES: list[Any] = [True, False, None, "5", "yes", "", [], {}, [1], {"a": 1}, 1.5, -1, 0]
HUGE: list[Any] = [
    2**31,
    2**63,
    2**64,
    -(2**63) - 1,
    10**30,
    1e300,
    -1e300,
    float("inf"),
    float("nan"),
    "5Ei",
    "8Ei",
    "16Ei",
    "1e300",
    "1e999999999",
    "1e-999999999",
    "9" * 50,
    "-5Ei",
    "9223372036854775807m",
    "2562048h",
    "1" * 5000,
]
# Placeholders put into the tree as strings and replaced in the written text, for what the
# tree cannot hold: nesting and aliases.
_PLACEHOLDER = re.compile(r"""["']?@@(deep|laughs|cycle):(\d+)(?::(\d+))?@@["']?""")


def _placeholder_text(match: re.Match[str]) -> str:
    kind, size, width = match.group(1), int(match.group(2)), int(match.group(3) or 10)
    if kind == "deep":
        return "[" * size + "]" * size
    if kind == "cycle":
        return f"&c{size} [*c{size}]"
    # A flow sequence whose anchors each repeat the previous one `width` times.
    levels = [f"&l0 [{', '.join(['lol'] * width)}]"]
    levels += [f"&l{i} [{', '.join([f'*l{i - 1}'] * width)}]" for i in range(1, size)]
    return f"[{', '.join(levels)}]"


def _places(tree: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """Paths to every node under the root."""
    if not isinstance(tree, dict | list):
        return
    items: Any = tree.items() if isinstance(tree, dict) else enumerate(tree)
    for key, value in items:
        yield (*path, key)
        yield from _places(value, (*path, key))


def _parent(tree: Any, path: tuple[Any, ...]) -> Any:
    for key in path[:-1]:
        tree = tree[key]
    return tree


@st.composite
def _mutated_tree(draw: st.DrawFn, base: Any) -> Any:
    tree = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, 3))):
        places = list(_places(tree))
        if not places:
            break
        path = draw(st.sampled_from(places))
        parent, key = _parent(tree, path), path[-1]
        kind = draw(
            st.sampled_from(["wrong", "huge", "deep", "laughs", "cycle", "unknown", "drop", "wrap"])
        )
        if kind == "wrong":
            parent[key] = copy.deepcopy(draw(st.sampled_from(WRONG_TYPES)))
        elif kind == "huge":
            parent[key] = draw(st.sampled_from(HUGE))
        elif kind == "deep":
            depth = draw(st.sampled_from([5, 90, 99, 100, 101, 150, 2000]))
            parent[key] = f"@@deep:{depth}@@"
        elif kind == "laughs":
            levels, width = draw(st.integers(1, 12)), draw(st.integers(2, 10))
            parent[key] = f"@@laughs:{levels}:{width}@@"
        elif kind == "cycle":
            parent[key] = f"@@cycle:{draw(st.integers(0, 9))}@@"
        elif kind == "unknown" and isinstance(parent, dict):
            parent[draw(st.from_regex(r"[a-z][a-zA-Z]{0,8}", fullmatch=True))] = 1
        elif kind == "drop":
            del parent[key]
        elif kind == "wrap":
            parent[key] = [parent[key]]
    return tree


def _write(tree: Any, as_json: bool) -> str:
    if as_json:
        text = json.dumps(tree, indent=1)  # keeps Infinity and NaN, as a careless writer would
    elif isinstance(tree, list):
        text = yaml.safe_dump_all(tree, sort_keys=False)
    else:
        text = yaml.safe_dump(tree, sort_keys=False)
    return _PLACEHOLDER.sub(_placeholder_text, text)


BAD_BYTES = [b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00", b"\x07", b"\xef\xbb\xbf", b"\t", b"&"]


@st.composite
def _damaged(draw: st.DrawFn, data: bytes) -> bytes:
    kind = draw(st.sampled_from(["none", "none", "insert", "cut", "repeat-line"]))
    if kind == "insert":
        at = draw(st.integers(0, len(data)))
        return data[:at] + draw(st.sampled_from(BAD_BYTES)) + data[at:]
    if kind == "cut":
        return data[: draw(st.integers(0, len(data)))]
    if kind == "repeat-line":
        lines = data.split(b"\n")
        at = draw(st.integers(0, len(lines) - 1))
        return b"\n".join([*lines[: at + 1], lines[at], *lines[at + 1 :]])
    return data


@st.composite
def bad_configs(draw: st.DrawFn) -> bytes:
    text = _write(draw(_mutated_tree(CONFIG)), as_json=draw(st.booleans()))
    return draw(_damaged(text.encode()))


@st.composite
def bad_scenarios(draw: st.DrawFn) -> bytes:
    documents = copy.deepcopy(SCENARIO)
    if draw(st.booleans()):
        documents.append(copy.deepcopy(CONFIG))
    text = _write(draw(_mutated_tree(documents)), as_json=False)
    return draw(_damaged(text.encode()))


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with pytest.MonkeyPatch.context() as monkeypatch:
        use_registry(monkeypatch, PluginRegistry.discover())
        directory = tmp_path_factory.mktemp("fuzz")
        warm_up(directory)
        yield directory


@_fuzz(CONFIG_EXAMPLES)
@given(data=bad_configs())
def test_validate_config_ends_cleanly_on_any_damaged_config(workdir: Path, data: bytes) -> None:
    path = workdir / "config.yaml"
    path.write_bytes(data)
    assert_clean_ending(run_cli(["validate-config", str(path)], trace_memory=False), str(path))


def test_a_bad_node_selector_value_is_named_as_upstream_names_it(workdir: Path) -> None:
    # Found by the fuzz above: upstream's path puts the requirement's key after the index.
    config = copy.deepcopy(CONFIG)
    entries = config["profiles"][0]["pluginConfig"]
    place = next(i for i, e in enumerate(entries) if e["name"] == "NodeAffinity")
    preferred = entries[place]["args"]["addedAffinity"][
        "preferredDuringSchedulingIgnoredDuringExecution"
    ]
    preferred[0]["preference"]["matchExpressions"][0]["values"] = ["\ufeffssd"]
    path = workdir / "node-affinity.yaml"
    path.write_text(yaml.safe_dump(config, allow_unicode=True))
    outcome = run_cli(["validate-config", str(path)], trace_memory=False)
    assert_clean_ending(outcome, str(path))
    assert outcome.code == 2
    assert outcome.stderr.startswith(
        f"error: profiles[0].pluginConfig[{place}].args.addedAffinity."
        "preferredDuringSchedulingIgnoredDuringExecution[0].matchExpressions[0].values[0][disk]:"
        ' Invalid value: "\\ufeffssd": a valid label must be'
    ), outcome.stderr


@_fuzz(SCENARIO_EXAMPLES)
@given(data=bad_scenarios())
def test_simulate_ends_cleanly_on_any_damaged_scenario(workdir: Path, data: bytes) -> None:
    path = workdir / "scenario.yaml"
    path.write_bytes(data)
    argv = ["simulate", str(path), "--no-progress", "--output", "json"]
    outcome = run_cli(argv, trace_memory=False)
    assert_clean_ending(outcome, str(path))
