"""Placement writes only within the leader's tenure."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

import pytest

from scheduler.cluster.send_gate import check_before_sending
from scheduler.core.fencing import FencedClusterAPI
from scheduler.core.fencing import NotLeadingError
from scheduler.objects.pod import Pod
from scheduler.testing import FakeClock
from scheduler.testing import make_pod


class Tenure:
    def __init__(self, clock: FakeClock, until: float) -> None:
        self.clock, self.until = clock, until

    def tenure_remaining(self, now: float) -> float:
        return max(0.0, self.until - now)


class Api:
    def __init__(self) -> None:
        self.calls: list[str] = []
        self.hold: asyncio.Event | None = None

    async def _call(self, what: str) -> None:
        if self.hold is not None:
            await self.hold.wait()
        self.calls.append(what)

    async def get(self, resource: str, namespace: str, name: str) -> dict[str, Any]:
        await self._call(f"get {resource} {name}")
        return {}

    async def bind(self, pod: Pod, node_name: str) -> None:
        await self._call(f"bind {pod.name} {node_name}")

    async def delete_pod(self, namespace: str, name: str, uid: str = "") -> None:
        await self._call(f"delete {name}")

    async def patch_pod_status(self, namespace: str, name: str, patch: Mapping[str, Any]) -> None:
        await self._call(f"status {name}")

    async def patch_object(
        self,
        resource: str,
        namespace: str,
        name: str,
        patch: Mapping[str, Any],
        subresource: str = "",
    ) -> None:
        await self._call(f"patch {resource} {name}")

    async def create(self, resource: str, obj: Mapping[str, Any]) -> dict[str, Any]:
        await self._call(f"create {resource} {obj['metadata'].get('generateName')}")
        return {"metadata": {"name": "made"}}

    async def delete(self, resource: str, namespace: str, name: str) -> None:
        await self._call(f"delete {resource} {name}")


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


async def test_writes_pass_while_the_tenure_lasts(clock: FakeClock) -> None:
    api = Api()
    fenced = FencedClusterAPI(api, Tenure(clock, clock.now() + 5), clock)
    pod = Pod.from_dict(make_pod("p").dict())
    await fenced.bind(pod, "n1")
    await fenced.delete_pod("default", "victim")
    await fenced.patch_object("persistentvolumeclaims", "default", "c", {})
    claim = {"metadata": {"namespace": "default", "generateName": "p-extended-resources-"}}
    assert await fenced.create("resourceclaims", claim) == {"metadata": {"name": "made"}}
    await fenced.delete("resourceclaims", "default", "made")
    assert api.calls == [
        "bind p n1",
        "delete victim",
        "patch persistentvolumeclaims c",
        "create resourceclaims p-extended-resources-",
        "delete resourceclaims made",
    ]
    assert clock.pending_timers == 0  # the tenure timers were cancelled


async def test_nothing_is_sent_once_the_tenure_is_over(clock: FakeClock) -> None:
    api = Api()
    fenced = FencedClusterAPI(api, Tenure(clock, clock.now()), clock)
    pod = Pod.from_dict(make_pod("p").dict())
    with pytest.raises(NotLeadingError, match="binding of default/p to n1: not sent"):
        await fenced.bind(pod, "n1")
    with pytest.raises(NotLeadingError):
        await fenced.delete_pod("default", "victim")
    # A claim the scheduler makes holds devices: only the leader may make or delete one.
    claim = {"metadata": {"namespace": "default", "generateName": "p-extended-resources-"}}
    with pytest.raises(NotLeadingError, match="creation of resourceclaims default/p-extended"):
        await fenced.create("resourceclaims", claim)
    with pytest.raises(NotLeadingError, match="deletion of resourceclaims default/c"):
        await fenced.delete("resourceclaims", "default", "c")
    # A status patch decides no placement, nor does a read: neither is fenced.
    await fenced.patch_pod_status("default", "p", {})
    await fenced.get("pods", "default", "p")
    assert api.calls == ["status p", "get pods p"]


async def test_a_write_still_waiting_when_the_tenure_ends_is_abandoned(clock: FakeClock) -> None:
    api = Api()
    api.hold = asyncio.Event()  # e.g. waiting for the client's rate limiter
    fenced = FencedClusterAPI(api, Tenure(clock, clock.now() + 3), clock)
    pod = Pod.from_dict(make_pod("p").dict())
    binding = asyncio.create_task(fenced.bind(pod, "n1"))
    await asyncio.sleep(0)
    clock.advance(3)
    with pytest.raises(NotLeadingError):
        await binding
    api.hold.set()
    await asyncio.sleep(0)
    assert api.calls == []


async def test_renewals_while_a_write_waits_let_it_wait_on(clock: FakeClock) -> None:
    api = Api()
    api.hold = asyncio.Event()  # a leader's Binding waiting long for the rate limiter
    tenure = Tenure(clock, clock.now() + 3)
    fenced = FencedClusterAPI(api, tenure, clock)
    pod = Pod.from_dict(make_pod("p").dict())
    binding = asyncio.create_task(fenced.bind(pod, "n1"))
    for _ in range(5):  # ten seconds of renewals, each extending the tenure by 3 s
        await asyncio.sleep(0)
        clock.advance(2)
        tenure.until = clock.now() + 3
    await asyncio.sleep(0)
    assert not binding.done()
    api.hold.set()
    await binding
    assert api.calls == ["bind p n1"]
    assert clock.pending_timers == 0
    # Once renewals stop, the wait ends with the tenure, however often it was extended.
    api.hold = asyncio.Event()
    second = asyncio.create_task(fenced.bind(pod, "n2"))
    await asyncio.sleep(0)
    clock.advance(3)
    with pytest.raises(NotLeadingError):
        await second
    assert clock.pending_timers == 0


async def test_cancelling_the_caller_is_not_mistaken_for_the_end_of_tenure(
    clock: FakeClock,
) -> None:
    api = Api()
    api.hold = asyncio.Event()
    fenced = FencedClusterAPI(api, Tenure(clock, clock.now() + 3), clock)
    pod = Pod.from_dict(make_pod("p").dict())
    binding = asyncio.create_task(fenced.bind(pod, "n1"))
    await asyncio.sleep(0)
    binding.cancel()
    with pytest.raises(asyncio.CancelledError):
        await binding


async def _run_ready_tasks() -> None:
    """Lets the tasks started so far run until each waits on something (a few loop turns)."""
    for _ in range(5):
        await asyncio.sleep(0)


class WireApi(Api):
    """An API whose writes pass the send gate as the kube transport's do: after waiting (for
    the rate limiter), immediately before going on the wire, then wait for their answer."""

    def __init__(self) -> None:
        super().__init__()
        self.answer = asyncio.Event()

    async def bind(self, pod: Pod, node_name: str) -> None:
        if self.hold is not None:
            await self.hold.wait()
        check_before_sending("POST")
        self.calls.append(f"sent bind {pod.name}")
        await self.answer.wait()


async def test_a_write_on_the_wire_when_the_tenure_ends_is_left_to_its_answer(
    clock: FakeClock,
) -> None:
    api = WireApi()
    fenced = FencedClusterAPI(api, Tenure(clock, clock.now() + 3), clock)
    pod = Pod.from_dict(make_pod("p").dict())
    binding = asyncio.create_task(fenced.bind(pod, "n1"))
    await _run_ready_tasks()
    assert api.calls == ["sent bind p"]
    clock.advance(3)  # the tenure ends while the answer is awaited
    await _run_ready_tasks()
    assert not binding.done()
    api.answer.set()
    await binding  # the Binding was made: the caller learns it, and records it


async def test_the_tenure_is_checked_again_just_before_sending(clock: FakeClock) -> None:
    api = WireApi()
    api.hold = asyncio.Event()
    tenure = Tenure(clock, clock.now() + 3)
    fenced = FencedClusterAPI(api, tenure, clock)
    pod = Pod.from_dict(make_pod("p").dict())
    binding = asyncio.create_task(fenced.bind(pod, "n1"))
    await asyncio.sleep(0)
    tenure.until = clock.now()  # the tenure is cut short (a renewal failed) before the timer
    api.hold.set()
    with pytest.raises(NotLeadingError, match="not sent"):
        await binding
    assert api.calls == []


async def test_outside_a_fenced_call_nothing_is_gated() -> None:
    check_before_sending("POST")  # no gate set: nothing to refuse
