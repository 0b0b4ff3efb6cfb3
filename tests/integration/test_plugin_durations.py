"""In a sampled cycle every extension point times its plugins, as upstream's framework does:
`scheduler_plugin_execution_duration_seconds` has a series for each one a pod went through."""

from __future__ import annotations

from scheduler.framework import CycleState
from scheduler.framework import Handle
from scheduler.framework import NodeInfo
from scheduler.framework import PluginSpec
from scheduler.framework import Pod
from scheduler.framework import Status
from scheduler.framework.status import Code
from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.integration.harness import Harness


class Everywhere:
    """A PreEnqueue, Reserve, Permit, PreBind and PostBind plugin that lets every pod through."""

    name = "Everywhere"

    def __init__(self, args: None, handle: Handle) -> None:
        pass

    def pre_enqueue(self, pod: Pod) -> Status:
        return Status()

    def reserve(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return Status()

    def unreserve(self, state: CycleState, pod: Pod, node_name: str) -> None:
        return None

    def permit(self, state: CycleState, pod: Pod, node_name: str) -> tuple[Status, float]:
        return Status(), 0.0

    def pre_bind_pre_flight(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return Status()

    async def pre_bind(self, state: CycleState, pod: Pod, node_name: str) -> Status:
        return Status()

    async def post_bind(self, state: CycleState, pod: Pod, node_name: str) -> None:
        return None


ENABLED = {"enabled": [{"name": "Everywhere"}]}
CONFIG = {
    "profiles": [
        {
            "schedulerName": "default-scheduler",
            "plugins": dict.fromkeys(
                ("preEnqueue", "reserve", "permit", "preBind", "postBind"), ENABLED
            ),
        }
    ]
}


async def test_a_sampled_cycle_times_every_plugin_at_every_extension_point() -> None:
    spec = PluginSpec(name="Everywhere", plugin_class=Everywhere)
    async with Harness(CONFIG, extra_plugins=[spec]) as h:
        h.scheduler.sampler.percent = 100
        h.create([make_node("n1").dict(), make_node("n2").dict(), make_pod("p").dict()])
        await h.schedule_active()
        await h.quiesce()
        assert h.node_of("default", "p")
        registry = h.scheduler.metrics.registry

        def timed(plugin: str, point: str) -> float | None:
            labels = {"plugin": plugin, "extension_point": point, "status": "Success"}
            return registry.get_sample_value(
                "scheduler_plugin_execution_duration_seconds_count", labels
            )

        points = ("PreEnqueue", "Reserve", "Permit", "PreBindPreFlight", "PreBind", "PostBind")
        for point in points:
            assert timed("Everywhere", point) == 1, point
        assert timed("SchedulingGates", "PreEnqueue") == 1
        assert timed("DefaultBinder", "Bind") == 1
        # As upstream, Filter and Score are timed once for each node they looked at, however
        # the plugin ran (NodeResourcesFit and TaintToleration run vectorized here).
        for plugin in ("NodeResourcesFit", "TaintToleration"):
            assert timed(plugin, "PreFilter" if plugin == "NodeResourcesFit" else "PreScore") == 1
            assert (timed(plugin, "Filter"), timed(plugin, "Score")) == (2, 2), plugin
        assert timed("NodeResourcesBalancedAllocation", "ScoreExtensionNormalize") is None
        assert timed("TaintToleration", "ScoreExtensionNormalize") == 1


async def test_a_plugin_that_skips_is_timed_but_not_counted_as_evaluated() -> None:
    """As upstream's instrumented PreFilter and PreScore plugins: Skip is no evaluation."""
    async with Harness() as h:
        h.scheduler.sampler.percent = 100
        h.create([make_node("n1").dict(), make_node("n2").dict(), make_pod("p").dict()])
        await h.schedule_active()
        assert h.node_of("default", "p")
        registry = h.scheduler.metrics.registry

        def sample(name: str, plugin: str, point: str, **labels: str) -> float:
            labels |= {"plugin": plugin, "extension_point": point}
            return registry.get_sample_value(name, labels) or 0.0

        def evaluated(plugin: str, point: str) -> float:
            profile = "default-scheduler"
            return sample("scheduler_plugin_evaluation_total", plugin, point, profile=profile)

        def timed(plugin: str, point: str, status: str) -> float:
            duration = "scheduler_plugin_execution_duration_seconds_count"
            return sample(duration, plugin, point, status=status)

        # A pod without affinity: NodeAffinity skips its PreFilter and PreScore.
        for point in ("PreFilter", "PreScore"):
            assert timed("NodeAffinity", point, "Skip") == 1, point
            assert evaluated("NodeAffinity", point) == 0, point
        assert evaluated("NodeResourcesFit", "PreFilter") == 1
        assert evaluated("NodeResourcesFit", "PreScore") == 1


async def test_every_evaluated_plugin_has_its_series_at_zero_before_any_pod() -> None:
    """As upstream's instrumented plugins, made with the profile."""
    async with Harness() as h:
        registry = h.scheduler.metrics.registry
        profile = h.scheduler.profiles["default-scheduler"]
        expected = {
            (ref.name, point)
            for point in ("PreFilter", "Filter", "PreScore", "Score")
            for ref in profile.effective.plugins.get(point, ())
        }
        assert ("NodeResourcesFit", "Filter") in expected
        for plugin, point in expected:
            labels = {"plugin": plugin, "extension_point": point, "profile": profile.name}
            value = registry.get_sample_value("scheduler_plugin_evaluation_total", labels)
            assert value == 0.0, (plugin, point)
        # Only those: a Bind or Reserve plugin's runs are not counted as evaluations.
        labels = {"plugin": "DefaultBinder", "extension_point": "Bind", "profile": profile.name}
        assert registry.get_sample_value("scheduler_plugin_evaluation_total", labels) is None


class BrokenScore:
    name = "BrokenScore"

    def __init__(self, args: None, handle: Handle) -> None:
        pass

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        raise RuntimeError("no score today")

    def score_extensions(self) -> None:
        return None


async def test_a_failed_score_is_timed_as_an_error_at_the_extension_point() -> None:
    spec = PluginSpec(name="BrokenScore", plugin_class=BrokenScore)
    plugins = {"score": {"enabled": [{"name": "BrokenScore"}]}}
    config = {"profiles": [{"schedulerName": "default-scheduler", "plugins": plugins}]}
    async with Harness(config, extra_plugins=[spec]) as h:
        h.create([make_node("n1").dict(), make_node("n2").dict(), make_pod("p").dict()])
        await h.schedule_active()
        labels = {"extension_point": "Score", "status": "Error", "profile": "default-scheduler"}
        observed = h.scheduler.metrics.registry.get_sample_value(
            "scheduler_framework_extension_point_duration_seconds_count", labels
        )
        assert observed == 1


class RejectsFirstNode:
    """A per-node Filter plugin that refuses node n1 and nothing else."""

    name = "RejectsFirstNode"

    def __init__(self, args: None, handle: Handle) -> None:
        pass

    def filter(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        if node_info.name == "n1":
            return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, "not n1")
        return Status()


async def test_each_filtered_node_is_timed_with_its_own_code_and_counted_once() -> None:
    """Upstream labels each node's Filter call with the code it returned, whether we ran the
    plugin vectorized (TaintToleration, NodeResourcesFit) or node by node."""
    spec = PluginSpec(name="RejectsFirstNode", plugin_class=RejectsFirstNode)
    plugins = {"filter": {"enabled": [{"name": "RejectsFirstNode"}]}}
    config = {"profiles": [{"schedulerName": "default-scheduler", "plugins": plugins}]}
    async with Harness(config, extra_plugins=[spec]) as h:
        h.scheduler.sampler.percent = 100
        h.create(
            [
                make_node("n1").dict(),
                make_node("n2").dict(),
                make_node("busy").capacity(cpu="1500m", memory="8Gi", pods="10").dict(),
                make_pod("running").node("busy").req(cpu="1").phase("Running").dict(),
                make_node("tainted").taint("dedicated", "infra").dict(),
                make_pod("p").req(cpu="1").dict(),
            ]
        )
        await h.schedule_active()
        await h.quiesce()
        assert h.node_of("default", "p") == "n2"
        registry = h.scheduler.metrics.registry

        def timed(plugin: str, status: str) -> float | None:
            labels = {"plugin": plugin, "extension_point": "Filter", "status": status}
            return registry.get_sample_value(
                "scheduler_plugin_execution_duration_seconds_count", labels
            )

        def evaluations(plugin: str) -> float | None:
            labels = {"plugin": plugin, "extension_point": "Filter", "profile": "default-scheduler"}
            return registry.get_sample_value("scheduler_plugin_evaluation_total", labels)

        unresolvable = "UnschedulableAndUnresolvable"
        assert (timed("TaintToleration", "Success"), timed("TaintToleration", unresolvable)) == (
            3,
            1,
        )
        assert (
            timed("NodeResourcesFit", "Success"),
            timed("NodeResourcesFit", "Unschedulable"),
        ) == (
            2,
            1,
        )
        assert (timed("RejectsFirstNode", "Success"), timed("RejectsFirstNode", unresolvable)) == (
            1,
            1,
        )
        assert timed("NodeResourcesFit", unresolvable) is None
        assert [
            evaluations(p) for p in ("TaintToleration", "NodeResourcesFit", "RejectsFirstNode")
        ] == [
            4,
            3,
            2,
        ]


async def test_a_nominated_node_tried_alone_is_one_filter_pass() -> None:
    """Upstream searches a pod's nominated node alone first, timed as a Filter pass; when it
    fits, there is no other."""
    async with Harness() as h:
        h.create(
            [
                make_node("n1").dict(),
                make_node("n2").dict(),
                make_pod("p").nominated("n2").dict(),
            ]
        )
        await h.schedule_active()
        assert h.node_of("default", "p") == "n2"
        labels = {"extension_point": "Filter", "status": "Success", "profile": "default-scheduler"}
        passes = h.scheduler.metrics.registry.get_sample_value(
            "scheduler_framework_extension_point_duration_seconds_count", labels
        )
        assert passes == 1
