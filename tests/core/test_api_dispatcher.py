"""The API dispatcher: calls about one object in order, one at a time; other objects in
parallel; a failed call neither stops the worker nor the object's next call."""

from __future__ import annotations

import asyncio

from scheduler.core.api_dispatcher import ApiDispatcher


class Gate:
    """A call that records when it starts and finishes, and finishes only when released."""

    def __init__(self, log: list[str], name: str, *, fail: bool = False) -> None:
        self.log = log
        self.name = name
        self.fail = fail
        self.started = asyncio.Event()
        self.release = asyncio.Event()

    async def __call__(self) -> None:
        self.log.append(f"start {self.name}")
        self.started.set()
        await self.release.wait()
        self.log.append(f"end {self.name}")
        if self.fail:
            raise RuntimeError(f"{self.name} refused")


async def test_calls_about_one_object_run_one_at_a_time_in_submission_order() -> None:
    log: list[str] = []
    dispatcher = ApiDispatcher(workers=4)
    dispatcher.start()
    first, second, third = (Gate(log, n) for n in ("first", "second", "third"))
    dispatcher.submit("ns/p", "first", first)
    dispatcher.submit("ns/p", "second", second)
    dispatcher.submit("ns/p", "third", third)
    await first.started.wait()
    # Free workers are idle, yet the later calls wait: releasing them first changes nothing.
    third.release.set()
    second.release.set()
    for _ in range(10):
        await asyncio.sleep(0)  # let every idle worker run
    assert log == ["start first"]
    assert dispatcher.pending == 3
    first.release.set()
    await dispatcher.drain()
    assert log == [
        "start first",
        "end first",
        "start second",
        "end second",
        "start third",
        "end third",
    ]
    assert dispatcher.pending == 0
    await dispatcher.stop()


async def test_calls_about_different_objects_run_in_parallel() -> None:
    log: list[str] = []
    dispatcher = ApiDispatcher(workers=2)
    dispatcher.start()
    a, b = Gate(log, "a"), Gate(log, "b")
    dispatcher.submit("ns/a", "a", a)
    dispatcher.submit("ns/b", "b", b)
    # Both start while neither has finished.
    await a.started.wait()
    await b.started.wait()
    assert sorted(log) == ["start a", "start b"]
    b.release.set()
    a.release.set()
    await dispatcher.drain()
    assert dispatcher.pending == 0
    await dispatcher.stop()


async def test_a_failed_call_does_not_hold_back_the_next_one() -> None:
    log: list[str] = []
    dispatcher = ApiDispatcher(workers=1)
    dispatcher.start()
    failing, after = Gate(log, "failing", fail=True), Gate(log, "after")
    failing.release.set()
    after.release.set()
    dispatcher.submit("ns/p", "failing", failing)
    dispatcher.submit("ns/p", "after", after)
    await dispatcher.drain()
    assert log == ["start failing", "end failing", "start after", "end after"]
    # The key is forgotten once its calls are done: a new call starts at once.
    again = Gate(log, "again")
    again.release.set()
    dispatcher.submit("ns/p", "again", again)
    await dispatcher.drain()
    assert log[-2:] == ["start again", "end again"]
    await dispatcher.stop()


async def test_superseding_drops_calls_not_started_and_waits_for_the_one_running() -> None:
    log: list[str] = []
    gates = {name: Gate(log, name) for name in ("running", "queued")}
    dispatcher = ApiDispatcher(workers=2)
    for name, gate in gates.items():
        dispatcher.submit("ns/p", name, gate)
    dispatcher.start()
    running, queued = gates["running"], gates["queued"]
    await running.started.wait()
    superseding = asyncio.ensure_future(dispatcher.supersede("ns/p"))
    for _ in range(10):
        await asyncio.sleep(0)
    assert not superseding.done()  # the call under way may still land: wait for it
    running.release.set()
    queued.release.set()
    await superseding
    await dispatcher.drain()
    assert log == ["start running", "end running"]
    assert dispatcher.pending == 0
    await dispatcher.stop()


async def test_a_key_superseded_before_its_first_call_started_takes_new_calls() -> None:
    log: list[str] = []
    dispatcher = ApiDispatcher(workers=1)
    stale, fresh = Gate(log, "stale"), Gate(log, "fresh")
    fresh.release.set()
    dispatcher.submit("ns/p", "stale", stale)  # no worker yet: it cannot have started
    await dispatcher.supersede("ns/p")
    dispatcher.submit("ns/p", "fresh", fresh)
    dispatcher.start()
    await dispatcher.drain()
    assert log == ["start fresh", "end fresh"]
    assert dispatcher.pending == 0
    await dispatcher.stop()
