"""Opportunistic batching on the real scheduler: a pod like the one before it takes the next
node of that pod's ranking without being scored, only when that is safe, and every hint and
dropped ranking is counted under upstream's metric names.

`Slots` is a plugin of the test's own: a node holds `SLOTS_LABEL` pods (one by default) and
scores its `RANK_LABEL`; pods are alike unless their `KIND_LABEL` differs. It counts the nodes
it scores, so a test can tell a pod placed by a hint (no scoring) from one that was scored.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scheduler.config.feature_gates import FeatureGates
from scheduler.framework import CycleState
from scheduler.framework import Handle
from scheduler.framework import NodeInfo
from scheduler.framework import PluginSpec
from scheduler.framework import Pod
from scheduler.framework import SignPlugin
from scheduler.framework import Status
from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.batching_scenario import NO_SPREADING
from tests.batching_scenario import NODE_CPUS
from tests.batching_scenario import preference_node
from tests.batching_scenario import preferring_pod
from tests.integration.harness import Harness

RANK_LABEL = "example.com/rank"
SLOTS_LABEL = "example.com/slots"
KIND_LABEL = "example.com/kind"
PROFILE = "default-scheduler"


class Slots:
    name = "Slots"

    def __init__(self, args: None, handle: Handle) -> None:
        self.scored: list[str] = []
        self.signed: list[str] = []
        self.fail_signing = False

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        assert node_info.node is not None
        slots = int(node_info.node.labels.get(SLOTS_LABEL, "1"))
        return Status() if len(node_info.pods) < slots else Status.unschedulable("node is full")

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        assert node_info.node is not None
        self.scored.append(pod.name)
        return int(node_info.node.labels.get(RANK_LABEL, "0")), Status()

    def score_extensions(self) -> None:
        return None

    def sign_pod(self, pod: Pod) -> Mapping[str, object] | None:
        self.signed.append(pod.name)
        if self.fail_signing:
            raise RuntimeError("cannot sign today")
        return {"kind": pod.labels.get(KIND_LABEL, "")}


class Unsigned:
    """A Filter plugin without `sign_pod`: its profile may not batch."""

    name = "Unsigned"

    def __init__(self, args: None, handle: Handle) -> None:
        pass

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return Status()


class Refuser:
    """A Filter plugin that can sign no pod, as PodTopologySpread under system defaults."""

    name = "Refuser"

    def __init__(self, args: None, handle: Handle) -> None:
        pass

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        return Status()

    def sign_pod(self, pod: Pod) -> Mapping[str, object] | None:
        return None


SPECS = (
    PluginSpec("Slots", Slots),
    PluginSpec("Unsigned", Unsigned),
    PluginSpec("Refuser", Refuser),
)


def _config(*plugins: str) -> dict[str, Any]:
    enabled = [{"name": "PrioritySort"}, {"name": "DefaultBinder"}]
    enabled += [{"name": name} for name in plugins]
    return {
        "profiles": [
            {
                "schedulerName": PROFILE,
                "plugins": {"multiPoint": {"enabled": enabled, "disabled": [{"name": "*"}]}},
            }
        ]
    }


def _gate(batching: bool) -> FeatureGates:
    return FeatureGates({"OpportunisticBatching": batching})


def _harness(*plugins: str, batching: bool = True) -> Harness:
    return Harness(_config(*(plugins or ("Slots",))), extra_plugins=SPECS, features=_gate(batching))


def _nodes(*ranks: int, slots: int = 1) -> list[dict[str, Any]]:
    return [
        make_node(f"rank-{rank}").label(RANK_LABEL, str(rank)).label(SLOTS_LABEL, str(slots)).dict()
        for rank in ranks
    ]


def _pod(name: str, kind: str = "a") -> dict[str, Any]:
    return make_pod(name).label(KIND_LABEL, kind).dict()


def _slots(h: Harness) -> Slots:
    plugin = h.scheduler.profiles[PROFILE].plugins["Slots"]
    assert isinstance(plugin, Slots)
    return plugin


def _sample(h: Harness, name: str, **labels: str) -> float:
    value = h.scheduler.metrics.registry.get_sample_value(name, {"profile": PROFILE, **labels})
    return value or 0.0


def _attempts(h: Harness, result: str) -> float:
    return _sample(h, "scheduler_batch_attempts_total", result=result)


def _flushes(h: Harness, reason: str) -> float:
    return _sample(h, "scheduler_batch_cache_flushed_total", reason=reason)


async def _schedule_one_by_one(h: Harness, pods: list[dict[str, Any]]) -> None:
    for pod in pods:
        h.create([pod])
        await h.schedule_active()


async def test_alike_pods_that_fill_their_node_take_the_next_node_of_the_ranking_unscored() -> None:
    async with _harness() as h:
        h.create(_nodes(90, 80, 70, 60))
        await _schedule_one_by_one(h, [_pod("p1"), _pod("p2"), _pod("p3")])
        assert [h.node_of("default", p) for p in ("p1", "p2", "p3")] == [
            "rank-90",
            "rank-80",
            "rank-70",
        ]
        # Only the first pod was scored, on every node; the others took hints.
        assert _slots(h).scored == ["p1"] * 4
        assert h.scheduler.profiles[PROFILE].batch.batched_pods == 2
        assert _attempts(h, "no_hint") == 1
        assert _attempts(h, "hint_used") == 2


async def test_with_the_gate_off_every_pod_is_scored_and_nothing_is_counted() -> None:
    async with _harness(batching=False) as h:
        h.create(_nodes(90, 80, 70))
        await _schedule_one_by_one(h, [_pod("p1"), _pod("p2")])
        assert [h.node_of("default", p) for p in ("p1", "p2")] == ["rank-90", "rank-80"]
        assert _slots(h).scored == ["p1"] * 3 + ["p2"] * 2
        assert _attempts(h, "no_hint") == 0
        assert "scheduler_batch_attempts_total{" not in h.scheduler.metrics.render().decode()


async def test_a_pod_of_another_kind_is_scored_and_drops_the_ranking() -> None:
    async with _harness() as h:
        h.create(_nodes(90, 80, 70))
        await _schedule_one_by_one(h, [_pod("p1"), _pod("other", kind="b")])
        assert h.node_of("default", "other") == "rank-80"
        assert _slots(h).scored == ["p1"] * 3 + ["other"] * 2
        assert _flushes(h, "pod_incompatible") == 1
        assert _attempts(h, "hint_used") == 0


async def test_a_node_with_room_left_means_the_next_pod_is_scored() -> None:
    async with _harness() as h:
        h.create(_nodes(90, 80, slots=2))
        await _schedule_one_by_one(h, [_pod("p1"), _pod("p2")])
        # The node p1 took may still be the best for p2: only scoring can tell, and it is.
        assert h.node_of("default", "p2") == "rank-90"
        assert _slots(h).scored == ["p1"] * 2 + ["p2"] * 2
        assert _flushes(h, "node_not_full") == 1


async def test_a_ranking_older_than_half_a_second_is_not_reused() -> None:
    async with _harness() as h:
        h.create(_nodes(90, 80, 70))
        await _schedule_one_by_one(h, [_pod("p1")])
        h.clock.advance(0.6)
        await _schedule_one_by_one(h, [_pod("p2")])
        assert h.node_of("default", "p2") == "rank-80"
        assert _slots(h).scored == ["p1"] * 3 + ["p2"] * 2
        assert _flushes(h, "expired") == 1


async def test_a_hinted_node_that_no_longer_fits_is_passed_over_and_the_pod_scored() -> None:
    async with _harness() as h:
        h.create(_nodes(90, 80, 70, 60))
        await _schedule_one_by_one(h, [_pod("p1")])
        # Something else lands on the node next in p1's ranking.
        h.create([make_pod("squatter").node("rank-80").dict()])
        await h.quiesce()
        await _schedule_one_by_one(h, [_pod("p2")])
        assert h.node_of("default", "p2") == "rank-70"
        # p2 was scored on the nodes left, and its own ranking is kept for the pod after it.
        assert _slots(h).scored == ["p1"] * 4 + ["p2"] * 2
        assert _attempts(h, "hint_not_used") == 1
        await _schedule_one_by_one(h, [_pod("p3")])
        assert h.node_of("default", "p3") == "rank-60"
        assert _attempts(h, "hint_used") == 1


async def test_a_pod_popped_after_another_profile_or_a_skipped_pod_is_scored() -> None:
    async with _harness() as h:
        h.create(_nodes(90, 80, 70))
        await _schedule_one_by_one(h, [_pod("p1")])
        # A pod of a scheduler we do not serve is never queued; one being deleted is popped
        # and skipped, which takes a cycle.
        doomed = _pod("doomed")
        doomed["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
        doomed["spec"]["nodeName"] = ""
        h.create([doomed])
        await h.schedule_active()
        await _schedule_one_by_one(h, [_pod("p2")])
        assert h.node_of("default", "p2") == "rank-80"
        assert "p2" in _slots(h).scored
        assert _flushes(h, "pod_skipped") == 1


async def test_a_plugin_that_fails_to_sign_only_costs_its_pods_the_batching() -> None:
    async with _harness() as h:
        _slots(h).fail_signing = True
        h.create(_nodes(90, 80, 70))
        await _schedule_one_by_one(h, [_pod("p1"), _pod("p2")])
        assert [h.node_of("default", p) for p in ("p1", "p2")] == ["rank-90", "rank-80"]
        assert _slots(h).scored == ["p1"] * 3 + ["p2"] * 2
        assert _flushes(h, "pod_not_batchable") == 2
        assert h.scheduler.fatal_error is None


async def test_a_profile_with_a_plugin_that_cannot_sign_never_batches() -> None:
    async with _harness("Slots", "Unsigned") as h:
        h.create(_nodes(90, 80, 70))
        await _schedule_one_by_one(h, [_pod("p1"), _pod("p2")])
        assert _slots(h).scored == ["p1"] * 3 + ["p2"] * 2
        assert _attempts(h, "no_hint") == 2
        assert _flushes(h, "pod_not_batchable") == 2


async def test_the_ranking_runs_out_and_the_next_pod_is_scored_again() -> None:
    async with _harness() as h:
        h.create(_nodes(90, 80))
        await _schedule_one_by_one(h, [_pod("p1"), _pod("p2")])
        h.create(_nodes(70))
        await h.quiesce()
        await _schedule_one_by_one(h, [_pod("p3")])
        assert h.node_of("default", "p3") == "rank-70"
        # p2 took the last node of p1's ranking; p3 found nothing kept and was scored alone.
        assert _slots(h).scored == ["p1"] * 2
        assert _attempts(h, "hint_used") == 1
        assert _attempts(h, "no_hint") == 2


def test_the_test_plugin_signs_as_the_api_says() -> None:
    assert isinstance(Slots(None, _NO_HANDLE), SignPlugin)
    assert not isinstance(Unsigned(None, _NO_HANDLE), SignPlugin)


_NO_HANDLE: Any = None


async def test_nodes_that_tie_are_each_offered_once() -> None:
    async with _harness() as h:
        tied = [make_node(f"tied-{i}").label(RANK_LABEL, "50").dict() for i in range(4)]
        h.create([*tied, make_node("worse").label(RANK_LABEL, "10").dict()])
        await _schedule_one_by_one(h, [_pod(f"p{i}") for i in range(5)])
        placed = [h.node_of("default", f"p{i}") for i in range(5)]
        # The four tied nodes first, each once and in some order, then the worse one.
        assert sorted(str(node) for node in placed[:4]) == [f"tied-{i}" for i in range(4)]
        assert placed[4] == "worse"
        assert _attempts(h, "hint_used") == 4


# ---- the default plugins, PodTopologySpread left out -------------------------------------------


async def _second_pods_node(*, batching: bool) -> str | None:
    """Where the second of two alike pods goes (see tests/batching_scenario.py)."""
    config = {"profiles": [{"schedulerName": PROFILE, "plugins": NO_SPREADING}]}
    async with Harness(config, features=_gate(batching)) as h:
        h.create(preference_node(name, name).dict() for name in NODE_CPUS)
        await _schedule_one_by_one(h, [preferring_pod("first").dict()])
        assert h.node_of("default", "first") == "a"
        await _schedule_one_by_one(h, [preferring_pod("second").dict()])
        return h.node_of("default", "second")


async def test_with_the_default_plugins_the_second_pod_reuses_the_first_ones_ranking() -> None:
    assert await _second_pods_node(batching=True) == "c"


async def test_with_the_default_plugins_and_no_batching_the_second_pod_is_scored() -> None:
    assert await _second_pods_node(batching=False) == "b"


async def test_the_default_profile_never_batches() -> None:
    async with Harness({}) as h:
        h.create(_nodes(90, 80, 70))
        await _schedule_one_by_one(h, [_pod("p1"), _pod("p2")])
        assert h.scheduler.profiles[PROFILE].batch.batched_pods == 0
        # PodTopologySpread's system defaults make every pod unsignable.
        assert _flushes(h, "pod_not_batchable") == 2


async def test_the_plugin_that_refused_to_sign_is_asked_first_next_time() -> None:
    async with _harness("Slots", "Refuser") as h:
        h.create(_nodes(90, 80, 70, 60))
        await _schedule_one_by_one(h, [_pod("p1"), _pod("p2"), _pod("p3")])
        # Slots signed the first pod before Refuser refused it; after that Refuser's answer
        # alone settles each signature.
        assert _slots(h).signed == ["p1"]
        assert _flushes(h, "pod_not_batchable") == 3
