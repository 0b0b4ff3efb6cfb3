"""PodTopologySpreadArgs: defaults, and validation errors with their field paths."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from plugins.pod_topology_spread import SPEC
from plugins.pod_topology_spread import PodTopologySpread
from plugins.pod_topology_spread import PodTopologySpreadArgs
from scheduler.config import ConfigError
from scheduler.config import load_config_dict
from scheduler.objects.node import ZONE_LABEL
from scheduler.runtime.discovery import PluginRegistry
from scheduler.testing import FakeHandle

ZONE_SOFT = {"maxSkew": 1, "topologyKey": ZONE_LABEL, "whenUnsatisfiable": "ScheduleAnyway"}


def _problems(raw: dict[str, Any]) -> list[tuple[str, str]]:
    """(dotted path, message) of every error, in order."""
    with pytest.raises(ValidationError) as caught:
        PodTopologySpreadArgs.model_validate(raw)
    return [
        (".".join(str(part) for part in error["loc"]), error["msg"])
        for error in caught.value.errors(include_url=False)
    ]


def test_defaults() -> None:
    args = PodTopologySpreadArgs()
    assert args.defaulting_type == "System"
    assert args.default_constraints == ()
    assert PodTopologySpreadArgs.model_validate({"defaultingType": ""}).defaulting_type == "System"


def test_list_defaulting_accepts_valid_constraints() -> None:
    args = PodTopologySpreadArgs.model_validate(
        {
            "defaultingType": "List",
            "defaultConstraints": [
                ZONE_SOFT,
                {**ZONE_SOFT, "whenUnsatisfiable": "DoNotSchedule", "minDomains": 2},
                {
                    "maxSkew": 3,
                    "topologyKey": "example.com/rack",
                    "whenUnsatisfiable": "ScheduleAnyway",
                },
            ],
        }
    )
    assert [c.topology_key for c in args.default_constraints] == [
        ZONE_LABEL,
        ZONE_LABEL,
        "example.com/rack",
    ]


NAME_RULE = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)

CASES: list[tuple[str, dict[str, Any], list[tuple[str, str]]]] = [
    (
        "unknown defaulting type",
        {"defaultingType": "Auto"},
        [("defaultingType", 'Unsupported value: "Auto": supported values: "System", "List"')],
    ),
    (
        "System with constraints",
        {"defaultConstraints": [ZONE_SOFT]},
        [("defaultingType", 'Invalid value: "System": when .defaultConstraints are not empty')],
    ),
    (
        "maxSkew not positive",
        {"defaultingType": "List", "defaultConstraints": [{**ZONE_SOFT, "maxSkew": 0}]},
        [("defaultConstraints.0.maxSkew", "Invalid value: 0: not in valid range (0, inf)")],
    ),
    (
        "empty topology key and action",
        {"defaultingType": "List", "defaultConstraints": [{"maxSkew": 1}]},
        [
            ("defaultConstraints.0.topologyKey", "Required value: can not be empty"),
            ("defaultConstraints.0.whenUnsatisfiable", "Required value: can not be empty"),
        ],
    ),
    (
        "invalid topology key",
        {"defaultingType": "List", "defaultConstraints": [{**ZONE_SOFT, "topologyKey": "-zone"}]},
        [("defaultConstraints.0.topologyKey", f'Invalid value: "-zone": name part {NAME_RULE}')],
    ),
    (
        "topology key with two slashes",
        {
            "defaultingType": "List",
            "defaultConstraints": [{**ZONE_SOFT, "topologyKey": "example.com/a/b"}],
        },
        [
            (
                "defaultConstraints.0.topologyKey",
                f'Invalid value: "example.com/a/b": a valid label key {NAME_RULE} with an '
                "optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
            )
        ],
    ),
    (
        "unsupported action",
        {
            "defaultingType": "List",
            "defaultConstraints": [{**ZONE_SOFT, "whenUnsatisfiable": "Never"}],
        },
        [
            (
                "defaultConstraints.0.whenUnsatisfiable",
                'Unsupported value: "Never": supported values: "DoNotSchedule", "ScheduleAnyway"',
            )
        ],
    ),
    (
        "selector given",
        {
            "defaultingType": "List",
            "defaultConstraints": [{**ZONE_SOFT, "labelSelector": {"matchLabels": {"a": "b"}}}],
        },
        [
            (
                "defaultConstraints.0.labelSelector",
                "Forbidden: constraint must not define a selector, as they deduced for each pod",
            )
        ],
    ),
    (
        "same key and action twice",
        {"defaultingType": "List", "defaultConstraints": [ZONE_SOFT, {**ZONE_SOFT, "maxSkew": 2}]},
        [
            (
                "defaultConstraints.1",
                f'Duplicate value: "{{{ZONE_LABEL}, ScheduleAnyway}}"',
            )
        ],
    ),
]


@pytest.mark.parametrize(("raw", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_validation(raw: dict[str, Any], expected: list[tuple[str, str]]) -> None:
    assert _problems(raw) == expected


def test_unknown_fields_are_rejected() -> None:
    problems = _problems(
        {"defaultingType": "List", "defaultConstraints": [{**ZONE_SOFT, "maxSkw": 1}]}
    )
    assert [path for path, _ in problems] == ["defaultConstraints.0.maxSkw"]


def test_errors_carry_the_full_path_in_a_configuration() -> None:
    registry = PluginRegistry(specs=[SPEC])
    config = {
        "apiVersion": "kubescheduler.config.k8s.io/v1",
        "kind": "KubeSchedulerConfiguration",
        "profiles": [
            {
                "schedulerName": "default-scheduler",
                "pluginConfig": [
                    {
                        "name": "PodTopologySpread",
                        "args": {
                            "defaultingType": "List",
                            "defaultConstraints": [{**ZONE_SOFT, "maxSkew": -1}],
                        },
                    }
                ],
            }
        ],
    }
    with pytest.raises(ConfigError) as caught:
        load_config_dict(config, registry)
    assert (
        "profiles[0].pluginConfig[0].args.defaultConstraints[0].maxSkew: "
        "Invalid value: -1: not in valid range (0, inf)"
    ) in str(caught.value)


def test_spec_describes_the_plugin() -> None:
    assert SPEC.name == "PodTopologySpread"
    assert SPEC.args_model is PodTopologySpreadArgs
    assert set(SPEC.watches) == {
        "services",
        "replicationcontrollers",
        "replicasets",
        "statefulsets",
    }
    assert SPEC.extension_points == ["PreFilter", "Filter", "PreScore", "Score"]
    plugin = SPEC.create(SPEC.default_args(), FakeHandle())
    assert isinstance(plugin, PodTopologySpread)
