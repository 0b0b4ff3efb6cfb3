"""DefaultPreemption asking extenders with a preempt verb (`post_filter_awaiting`): what they
keep is chosen from, ranked as the dry run's own candidates are."""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Mapping

from scheduler.framework import CycleState
from scheduler.framework import ExtenderError
from scheduler.framework import Pod
from scheduler.framework import PodsOnNode
from scheduler.framework import PostFilterResult
from scheduler.framework import Status
from scheduler.framework import Victims
from scheduler.framework.status import Code
from tests.plugins.default_preemption_world import World
from tests.plugins.default_preemption_world import preemptor
from tests.plugins.default_preemption_world import running
from tests.plugins.test_default_preemption import nodes

Answer = Callable[[Mapping[str, Victims], PodsOnNode], dict[str, Victims]]


class ScriptedExtenders:
    """Extenders whose preempt verb answers with `answer(candidates, pods_on)`."""

    def __init__(self, answer: Answer, *, interested: bool = True) -> None:
        self.answer = answer
        self.interested = interested
        self.asked: list[dict[str, Victims]] = []

    def interested_in_preemption(self, pod: Pod) -> bool:
        return self.interested

    async def process_preemption(
        self, pod: Pod, victims: Mapping[str, Victims], pods_on: PodsOnNode
    ) -> dict[str, Victims]:
        self.asked.append(dict(victims))
        return self.answer(victims, pods_on)


async def _preempt(world: World) -> tuple[PostFilterResult | None, Status]:
    state, pod = CycleState(), preemptor()
    return await world.plugin.post_filter_awaiting(state, pod, world.statuses(state, pod))


def _cluster(extenders: ScriptedExtenders) -> World:
    """n1's most important victim has priority 50, n2's 40: left alone, n2 is chosen."""
    pods = [
        running("a", "n1", cpu="1", priority=50),
        running("b", "n1", cpu="1", priority=1),
        running("c", "n2", cpu="1", priority=40),
        running("d", "n2", cpu="1", priority=40),
    ]
    return World(nodes("n1", "n2"), pods, extenders=extenders)


def _reversed(victims: Mapping[str, Victims], pods_on: PodsOnNode) -> dict[str, Victims]:
    return {
        node: Victims(tuple(reversed(v.pods)), v.num_pdb_violations)
        for node, v in reversed(list(victims.items()))
    }


async def test_victims_keep_the_extenders_order_and_the_first_is_the_most_important() -> None:
    extenders = ScriptedExtenders(_reversed)
    world = _cluster(extenders)
    result, status = await _preempt(world)
    # As upstream reads them: n1's first victim now has priority 1, below n2's 40, so n1 wins
    # although its most important victim (50) outranks n2's.
    assert status.is_success
    assert result == PostFilterResult(nominated_node_name="n1")
    [asked] = extenders.asked
    assert sorted(asked) == ["n1", "n2"]
    assert [p.name for p in asked["n1"].pods] == ["a", "b"]
    # The extender's last victim is the one preempted last.
    await world.handle.run_background()
    assert world.api.deleted == ["default/b", "default/a"]


async def test_a_node_the_extender_drops_is_not_preempted_on() -> None:
    def keep_n1(victims: Mapping[str, Victims], pods_on: PodsOnNode) -> dict[str, Victims]:
        return {"n1": victims["n1"]}

    world = _cluster(ScriptedExtenders(keep_n1))
    result, status = await _preempt(world)
    assert status.is_success and result == PostFilterResult(nominated_node_name="n1")
    await world.handle.run_background()
    assert sorted(world.api.deleted) == ["default/a", "default/b"]


async def test_an_extender_error_fails_preemption_with_nothing_deleted() -> None:
    def fail(victims: Mapping[str, Victims], pods_on: PodsOnNode) -> dict[str, Victims]:
        raise ExtenderError("failed preempt with extender at URL http://x/preempt, code 500")

    world = _cluster(ScriptedExtenders(fail))
    result, status = await _preempt(world)
    assert result is None
    assert status.code is Code.ERROR
    assert status.message() == (
        "preemption: failed preempt with extender at URL http://x/preempt, code 500"
    )
    assert world.handle.background == []


async def test_extenders_not_interested_in_the_pod_are_not_asked() -> None:
    extenders = ScriptedExtenders(_reversed, interested=False)
    world = _cluster(extenders)
    assert await _preempt(world) == world.preempt(preemptor())
    assert extenders.asked == []
