"""`kube-pyscheduler simulate` with claims: the embedded PV controller finishes the bindings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from scheduler.app.cli import main
from scheduler.testing import make_node
from scheduler.testing import make_pod
from scheduler.testing.storage_builders import claim_volume
from scheduler.testing.storage_builders import make_pv
from scheduler.testing.storage_builders import make_pvc
from scheduler.testing.storage_builders import make_storage_class

PLUGINS = [
    "plugins.volume_restrictions:SPEC",
    "plugins.node_volume_limits:SPEC",
    "plugins.volume_binding:SPEC",
    "plugins.volume_zone:SPEC",
]


def test_simulate_binds_static_provisioned_and_immediate_claims(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    objects = [
        make_node("n-a").zone("a").dict(),
        make_node("n-b").zone("b").dict(),
        make_storage_class("local", "kubernetes.io/no-provisioner")
        .wait_for_first_consumer()
        .dict(),
        make_storage_class("fast").wait_for_first_consumer().dict(),
        make_storage_class("std").dict(),
        make_pv("pv-b").storage_class("local").capacity("10Gi").zone("b").dict(),
        make_pvc("data").storage_class("local").request("5Gi").dict(),
        make_pvc("scratch").storage_class("fast").request("1Gi").dict(),
        make_pvc("shared").storage_class("std").request("1Gi").dict(),
        make_pod("db").spec(volumes=[claim_volume("data")]).dict(),
        make_pod("cache").spec(volumes=[claim_volume("scratch")]).dict(),
        make_pod("web").spec(volumes=[claim_volume("shared")]).dict(),
        make_pod("orphan").spec(volumes=[claim_volume("missing")]).dict(),
    ]
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(yaml.safe_dump_all(objects))
    plugin_flags = [flag for spec in PLUGINS for flag in ("--plugin", spec)]
    argv = ["simulate", str(scenario), *plugin_flags, "--output", "json", "--no-progress"]
    assert main(argv) == 0
    result = json.loads(capsys.readouterr().out)
    placed = {p["name"]: p["node"] for p in result["pods"]}
    assert placed["db"] == "n-b", "the only volume that fits is in zone b"
    assert placed["cache"] in {"n-a", "n-b"}
    assert placed["web"] in {"n-a", "n-b"}
    assert placed["orphan"] is None
    orphan = next(p for p in result["pods"] if p["name"] == "orphan")
    assert orphan["message"].startswith(
        '0/2 nodes are available: persistentvolumeclaim "missing" not found.'
    )
