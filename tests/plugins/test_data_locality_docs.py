"""The configuration docs/plugins/DataLocality.md shows loads, and its worked score holds."""

from __future__ import annotations

import json
from pathlib import Path

from plugins.data_locality import LOCATIONS_ANNOTATION
from plugins.data_locality import DataLocality
from plugins.data_locality import DataLocalityArgs
from scheduler.config import load_config_file
from scheduler.framework import CycleState
from scheduler.runtime.discovery import PluginRegistry
from scheduler.testing import FakeHandle
from scheduler.testing import build_table
from scheduler.testing import make_node
from scheduler.testing import make_pod

DOCS = Path(__file__).resolve().parents[2] / "docs" / "plugins"


def test_the_documented_profile_loads_and_scores_as_described() -> None:
    _, profiles = load_config_file(DOCS / "data-locality.yaml", PluginRegistry.discover())
    assert [p.scheduler_name for p in profiles] == ["default-scheduler", "data-local-scheduler"]
    args = profiles[1].plugin_args["DataLocality"]
    assert isinstance(args, DataLocalityArgs)
    table = build_table(
        [
            make_node("cache-7").zone("eu-west-1b", "eu-west-1").obj(),
            make_node("other-b").zone("eu-west-1b", "eu-west-1").obj(),
            make_node("other-c").zone("eu-west-1c", "eu-west-1").obj(),
        ]
    )
    plugin = DataLocality(args, FakeHandle(table))
    locations = [{"zone": "eu-west-1b", "size": "200Gi"}, {"hostname": "cache-7", "size": "20Gi"}]
    pod = make_pod("p").annotation(LOCATIONS_ANNOTATION, json.dumps(locations)).obj()
    state = CycleState()
    assert plugin.pre_score(state, pod, table, table.all_rows()).is_success
    assert [int(s) for s in plugin.score_nodes(state, pod, table, table.all_rows())] == [
        100,
        98,
        10,
    ]
