"""The configuration and pools docs/plugins/IPAllocation.md shows are ones the plugin reads."""

from __future__ import annotations

from pathlib import Path

import yaml

from plugins.ip_allocation import IPAllocationArgs
from plugins.ip_allocation.pool import parse_pool
from scheduler.config import load_config_file
from scheduler.runtime.discovery import PluginRegistry
from tests.deploy.manifests import DEPLOY_DIR

DOCS = Path(__file__).resolve().parents[2] / "docs" / "plugins"


def test_the_documented_profile_loads() -> None:
    _, profiles = load_config_file(DOCS / "ip-allocation.yaml", PluginRegistry.discover())
    args = profiles[0].plugin_args["IPAllocation"]
    assert isinstance(args, IPAllocationArgs)
    assert (args.max_conflict_retries, args.reconcile_interval_seconds) == (8, 30)


def test_the_example_pools_are_readable_and_match_the_crd() -> None:
    pools = list(yaml.safe_load_all((DOCS / "ip-pools-example.yaml").read_text()))
    crd = yaml.safe_load((DEPLOY_DIR / "crds" / "ippools.yaml").read_text())
    group, version = crd["spec"]["group"], crd["spec"]["versions"][0]["name"]
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    for raw in pools:
        assert raw["apiVersion"] == f"{group}/{version}"
        assert raw["kind"] == crd["spec"]["names"]["kind"]
        assert set(raw["spec"]) <= set(schema["properties"])
        assert set(schema["required"]) <= set(raw["spec"])
        pool = parse_pool(raw)
        assert next(pool.addresses()).endswith(".2")  # the gateway .1 is excluded
