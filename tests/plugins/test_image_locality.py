"""ImageLocality: nodes holding the pod's images score higher, damped by image spread."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from plugins.image_locality import SPEC
from plugins.image_locality import ImageLocality
from plugins.image_locality.images import normalized_image_name
from scheduler.framework import BatchScorePlugin
from scheduler.framework import CycleState
from scheduler.framework import Pod
from scheduler.framework import ScorePlugin
from scheduler.objects.node import Node
from scheduler.testing import FakeHandle
from scheduler.testing import build_table
from scheduler.testing import make_node
from scheduler.testing import make_pod
from scheduler.testing.plugin_harness import score_batch
from scheduler.testing.plugin_harness import score_each_node

MB = 1024 * 1024


def test_spec() -> None:
    plugin = ImageLocality(None, FakeHandle())
    assert SPEC.name == ImageLocality.name == "ImageLocality"
    assert SPEC.extension_points == ["Score"]
    assert isinstance(plugin, ScorePlugin)
    assert isinstance(plugin, BatchScorePlugin)
    assert plugin.score_extensions() is None


@pytest.mark.parametrize(
    ("name", "normalized"),
    [
        ("nginx", "nginx:latest"),
        ("nginx:1.27", "nginx:1.27"),
        ("gcr.io/team/app", "gcr.io/team/app:latest"),
        ("localhost:5000/app", "localhost:5000/app:latest"),
        ("localhost:5000/app:v2", "localhost:5000/app:v2"),
    ],
)
def test_normalized_image_name(name: str, normalized: str) -> None:
    assert normalized_image_name(name) == normalized


def scores_for(nodes: list[Node], pod: Pod) -> list[int]:
    table = build_table(nodes)
    plugin = ImageLocality(None, FakeHandle(table))
    per_node = score_each_node(plugin, CycleState(), pod, table)
    assert score_batch(plugin, CycleState(), pod, table) == per_node
    return per_node


def test_small_images_score_nothing_and_spread_damps() -> None:
    nodes = [
        make_node("small").image("gcr.io/40:latest", 40 * MB).obj(),
        make_node("large").image("gcr.io/300:latest", 300 * MB).obj(),
    ]
    pod = make_pod("p").image("gcr.io/40").container("gcr.io/300").obj()
    # Each image is on 1 of 2 nodes: 40 MiB counts as 20 MiB (below 23 MiB: 0); 300 MiB
    # counts as 150 MiB, mapped from [23, 2 x 1000] MiB: 100 * 127 / 1977 = 6.
    assert scores_for(nodes, pod) == [0, 6]


def test_image_everywhere_counts_in_full() -> None:
    nodes = [make_node(n).image("app:v1", 500 * MB).obj() for n in ("a", "b")]
    pod = make_pod("p").image("app:v1").obj()
    # 100 * (500 - 23) / (1000 - 23) = 48.8
    assert scores_for(nodes, pod) == [48, 48]


def test_score_is_capped_per_container() -> None:
    nodes = [make_node(n).image("huge:latest", 3000 * MB).obj() for n in ("a", "b")]
    assert scores_for(nodes, make_pod("p").image("huge").obj()) == [100, 100]
    # A second container raises the cap: 3000 of 2000 is still full, an init container too.
    two = make_pod("p").image("huge").container("huge").obj()
    assert scores_for(nodes, two) == [100, 100]
    # Init containers count toward the cap too; their image need not be held.
    with_init = make_pod("p").image("huge").init_container().obj()
    assert scores_for(nodes, with_init) == [100, 100]
    # Four containers allow 4000 MiB, so one 3000 MiB image no longer saturates.
    four = make_pod("p").image("huge").container("x").container("y").container("z").obj()
    assert scores_for(nodes, four) == [100 * (3000 - 23) // (4000 - 23)] * 2


def test_repeated_images_count_once_per_container() -> None:
    nodes = [make_node(n).image("app:latest", 300 * MB).obj() for n in ("a", "b")]
    once = make_pod("p").image("app").obj()
    twice = make_pod("p").image("app").container("app").obj()
    assert scores_for(nodes, once) == [100 * (300 - 23) // (1000 - 23)] * 2
    assert scores_for(nodes, twice) == [100 * (600 - 23) // (2000 - 23)] * 2


def test_missing_images_score_zero() -> None:
    nodes = [make_node("a").image("other:latest", 900 * MB).obj(), make_node("b").obj()]
    assert scores_for(nodes, make_pod("p").image("app").obj()) == [0, 0]


def test_one_size_per_image_name_across_the_cluster() -> None:
    # The first node to report the name sets its size for every holder.
    nodes = [
        make_node("a").image("app:v1", 500 * MB).obj(),
        make_node("b").image("app:v1", 900 * MB).obj(),
    ]
    expected = 100 * (500 - 23) // (1000 - 23)
    assert scores_for(nodes, make_pod("p").image("app:v1").obj()) == [expected, expected]


def test_image_volumes_add_to_the_sum_but_not_to_the_cap() -> None:
    nodes = [
        make_node("a").image("data:v1", 600 * MB).obj(),
        make_node("b").image("data:v1", 600 * MB).image("app:latest", 300 * MB).obj(),
    ]
    pod = (
        make_pod("p")
        .image("app")
        .spec(volumes=[{"name": "models", "image": {"reference": "data:v1"}}])
        .obj()
    )
    # One container: the cap stays 1000 MiB. b: 150 MiB (app on 1 of 2) + 600 MiB.
    assert scores_for(nodes, pod) == [
        100 * (600 - 23) // (1000 - 23),
        100 * (750 - 23) // (1000 - 23),
    ]


def test_digests_and_tags_are_names_of_their_own() -> None:
    digest = "registry.io/app@sha256:" + "a" * 64
    nodes = [
        make_node("a").image(digest, 400 * MB).obj(),
        make_node("b").image("registry.io/app:v1", 400 * MB).obj(),
    ]
    # A digest reference is kept as it is; each name is on one of the two nodes.
    assert scores_for(nodes, make_pod("p").image(digest).obj()) == [
        100 * (200 - 23) // (1000 - 23),
        0,
    ]
    assert scores_for(nodes, make_pod("p").image("registry.io/app").obj()) == [0, 0]


# ---- batch and per-node forms agree ----------------------------------------------------

IMAGES = ("app:latest", "db:5", "cache:latest", "tool:latest")


@st.composite
def image_nodes(draw: st.DrawFn) -> list[Node]:
    count = draw(st.integers(min_value=1, max_value=8))
    nodes = []
    for i in range(count):
        builder = make_node(f"n{i}")
        held = draw(st.lists(st.sampled_from(IMAGES), unique=True, max_size=len(IMAGES)))
        for image in held:
            builder.image(image, draw(st.integers(min_value=0, max_value=2500)) * MB)
        nodes.append(builder.obj())
    return nodes


@settings(max_examples=80, deadline=None)
@given(
    nodes=image_nodes(),
    images=st.lists(
        st.sampled_from(["app", "db:5", "cache", "tool", "missing"]), min_size=1, max_size=4
    ),
    data=st.data(),
)
def test_batch_and_per_node_forms_agree(
    nodes: list[Node], images: list[str], data: st.DataObject
) -> None:
    builder = make_pod("p").image(images[0])
    for image in images[1:]:
        builder.container(image)
    pod = builder.obj()
    table = build_table(nodes)
    plugin = ImageLocality(None, FakeHandle(table))
    per_node = score_each_node(plugin, CycleState(), pod, table)
    assert all(0 <= s <= 100 for s in per_node)
    assert score_batch(plugin, CycleState(), pod, table) == per_node
    rows = np.asarray(data.draw(st.permutations(range(table.size))), dtype=np.int64)
    assert score_batch(plugin, CycleState(), pod, table, rows) == [per_node[int(r)] for r in rows]
    # A second pass answers from the memo and must not drift.
    assert score_batch(plugin, CycleState(), pod, table) == per_node
