"""DataLocality: nodes near a pod's bound volumes and annotated data score higher."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest
from pydantic import ValidationError

from plugins.data_locality import LOCATIONS_ANNOTATION
from plugins.data_locality import SPEC
from plugins.data_locality import DataLocality
from plugins.data_locality import DataLocalityArgs
from scheduler.framework import BatchScorePlugin
from scheduler.framework import Code
from scheduler.framework import CycleState
from scheduler.framework import Pod
from scheduler.framework import ScorePlugin
from scheduler.testing import FakeHandle
from scheduler.testing import build_table
from scheduler.testing import make_node
from scheduler.testing import make_pod
from scheduler.testing.plugin_harness import score_batch
from scheduler.testing.plugin_harness import score_each_node
from scheduler.testing.storage_builders import claim_volume
from scheduler.testing.storage_builders import make_pv
from scheduler.testing.storage_builders import make_pvc

REGION = "topology.kubernetes.io/region"
ZONE = "topology.kubernetes.io/zone"
# Two regions; r1 has zones a and b, r2 has zone c.
NODES = [
    make_node("a1").zone("a", "r1"),
    make_node("a2").zone("a", "r1"),
    make_node("b1").zone("b", "r1"),
    make_node("c1").zone("c", "r2"),
]


def plugin_for(
    pvs: Sequence[Mapping[str, Any]] = (),
    pvcs: Sequence[Mapping[str, Any]] = (),
    args: Mapping[str, Any] | None = None,
) -> tuple[DataLocality, FakeHandle]:
    table = build_table([n.obj() for n in NODES])
    handle = FakeHandle(table, listers={"persistentvolumes": pvs, "persistentvolumeclaims": pvcs})
    return DataLocality(DataLocalityArgs.model_validate(args or {}), handle), handle


def scores(plugin: DataLocality, handle: FakeHandle, pod: Pod) -> list[int]:
    """Both Score forms, which must agree, after PreScore."""
    table = handle.table
    state = CycleState()
    status = plugin.pre_score(state, pod, table, table.all_rows())
    assert status.is_success, status
    each = score_each_node(plugin, state, pod, table)
    assert score_batch(plugin, state, pod, table) == each
    return each


def annotated(*locations: Mapping[str, str]) -> Pod:
    return make_pod("p").annotation(LOCATIONS_ANNOTATION, json.dumps(list(locations))).obj()


def test_spec() -> None:
    plugin, _ = plugin_for()
    assert SPEC.name == "DataLocality"
    assert SPEC.extension_points == ["PreScore", "Score"]
    assert set(SPEC.watches) == {"persistentvolumes", "persistentvolumeclaims"}
    assert isinstance(plugin, ScorePlugin) and isinstance(plugin, BatchScorePlugin)
    assert plugin.score_extensions() is None
    assert plugin.events_to_register() == []


def test_args_are_checked_with_their_field_names() -> None:
    args = DataLocalityArgs.model_validate({"zoneCredit": 0.8, "regionCredit": 0.1})
    assert (args.zone_credit, args.region_credit) == (0.8, 0.1)
    for bad, field in [
        ({"zoneCredit": 1.5}, "zoneCredit"),
        ({"regionCredit": -0.1}, "regionCredit"),
        ({"zoneWeight": 0.5}, "zoneWeight"),
    ]:
        with pytest.raises(ValidationError, match=field):
            DataLocalityArgs.model_validate(bad)
    with pytest.raises(ValidationError, match=r"regionCredit .* must not exceed zoneCredit"):
        DataLocalityArgs.model_validate({"zoneCredit": 0.2, "regionCredit": 0.5})


def test_a_pod_without_data_skips_scoring() -> None:
    plugin, handle = plugin_for()
    state = CycleState()
    status = plugin.pre_score(state, make_pod("p").obj(), handle.table, handle.table.all_rows())
    assert status.is_skip


def test_a_hostname_scores_the_host_its_zone_and_its_region() -> None:
    plugin, handle = plugin_for()
    # a1 is the host; a2 shares its zone (0.5); b1 its region (0.2); c1 nothing.
    assert scores(plugin, handle, annotated({"hostname": "a1"})) == [100, 50, 20, 0]


def test_sizes_weigh_the_locations() -> None:
    plugin, handle = plugin_for()
    pod = annotated({"zone": "b", "size": "30Gi"}, {"zone": "c", "size": "10Gi"})
    # b1 is at three quarters of the data; a-nodes share r1 with it (0.2 of 3/4).
    assert scores(plugin, handle, pod) == [15, 15, 75, 25]


def test_a_region_location_credits_every_node_in_it() -> None:
    plugin, handle = plugin_for()
    assert scores(plugin, handle, annotated({"region": "r2"})) == [0, 0, 0, 100]


def test_a_bound_claim_brings_its_volume_zone_and_capacity() -> None:
    pvs = [
        make_pv("pv-b").capacity("30Gi").zone("b").dict(),
        make_pv("pv-c").capacity("10Gi").label(ZONE, "c").label(REGION, "r2").dict(),
        # Unbound claims and volumes with no topology say nothing.
        make_pv("pv-nowhere").capacity("100Gi").dict(),
    ]
    pvcs = [
        make_pvc("data-b").bound_to("pv-b").dict(),
        make_pvc("data-c").bound_to("pv-c").dict(),
        make_pvc("data-nowhere").bound_to("pv-nowhere").dict(),
        make_pvc("pending").dict(),
    ]
    plugin, handle = plugin_for(pvs, pvcs)
    pod = (
        make_pod("p")
        .spec(volumes=[claim_volume(c) for c in ("data-b", "data-c", "data-nowhere", "pending")])
        .obj()
    )
    assert scores(plugin, handle, pod) == [15, 15, 75, 25]


def test_the_credits_come_from_the_args() -> None:
    plugin, handle = plugin_for(args={"zoneCredit": 1.0, "regionCredit": 0.0})
    assert scores(plugin, handle, annotated({"hostname": "a1"})) == [100, 100, 0, 0]


def test_a_location_no_node_is_at_still_credits_its_stated_region() -> None:
    plugin, handle = plugin_for()
    # No node carries hostname "gone"; nothing is known about where it is.
    assert scores(plugin, handle, annotated({"hostname": "gone"})) == [0, 0, 0, 0]
    pv = make_pv("pv").capacity("1Gi").label(ZONE, "z-new").label(REGION, "r2").dict()
    plugin, handle = plugin_for([pv], [make_pvc("d").bound_to("pv").dict()])
    pod = make_pod("p").spec(volumes=[claim_volume("d")]).obj()
    assert scores(plugin, handle, pod) == [0, 0, 0, 20]


def test_batch_scores_follow_the_rows_given() -> None:
    plugin, handle = plugin_for()
    pod = annotated({"hostname": "a1"})
    state = CycleState()
    plugin.pre_score(state, pod, handle.table, handle.table.all_rows())
    rows = np.array([3, 0], dtype=np.int64)
    assert score_batch(plugin, state, pod, handle.table, rows) == [0, 100]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("not json", "not JSON"),
        ('{"zone": "a"}', "must be a JSON list"),
        ('["a"]', r"\[0\]: must be an object"),
        ('[{"zone": "a", "hostname": "h"}]', r"\[0\]: needs exactly one of"),
        ('[{"zone": ""}]', r"\[0\]\.zone: must be a non-empty string"),
        ('[{"zone": "a"}, {"zone": "b", "size": "lots"}]', r"\[1\]\.size: not a quantity"),
        ('[{"zone": "a", "size": "-1Gi"}]', r"\[0\]\.size: must not be negative"),
        ('[{"rack": "r7"}]', r"\[0\]: unknown field 'rack'"),
    ],
)
def test_an_unreadable_annotation_fails_the_attempt_naming_the_entry(
    text: str, message: str
) -> None:
    plugin, handle = plugin_for()
    pod = make_pod("p").annotation(LOCATIONS_ANNOTATION, text).obj()
    status = plugin.pre_score(CycleState(), pod, handle.table, handle.table.all_rows())
    assert status.code is Code.ERROR
    assert LOCATIONS_ANNOTATION in status.message()
    assert re.search(message, status.message()), status.message()
