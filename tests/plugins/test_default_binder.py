"""DefaultBinder: binds through the cluster API and turns API errors into Error statuses."""

from __future__ import annotations

import pytest

from plugins.default_binder import SPEC
from plugins.default_binder import DefaultBinder
from scheduler.framework import BindPlugin
from scheduler.framework import Code
from scheduler.framework import CycleState
from scheduler.framework import Pod
from scheduler.framework.errors import APIError
from scheduler.framework.errors import ConflictError
from scheduler.framework.errors import NotFoundError
from scheduler.testing import FakeHandle
from scheduler.testing import make_pod
from scheduler.testing.plugin_harness import RecordingAPI


class FailingAPI(RecordingAPI):
    def __init__(self, error: APIError) -> None:
        super().__init__()
        self.error = error

    async def bind(self, pod: Pod, node_name: str) -> None:
        raise self.error


def test_spec() -> None:
    assert SPEC.name == DefaultBinder.name == "DefaultBinder"
    assert SPEC.extension_points == ["Bind"]
    assert isinstance(DefaultBinder(None, FakeHandle()), BindPlugin)


async def test_bind_creates_the_binding() -> None:
    api = RecordingAPI()
    plugin = DefaultBinder(None, FakeHandle(api=api))
    status = await plugin.bind(CycleState(), make_pod("web", "shop").obj(), "node-1")
    assert status.is_success
    assert api.bindings == [("shop/web", "node-1")]


@pytest.mark.parametrize(
    "error",
    [
        ConflictError("pod shop/web is already assigned to node n2"),
        NotFoundError("pods web not found"),
        APIError(500, "boom"),
    ],
    ids=["conflict", "not-found", "server-error"],
)
async def test_api_errors_become_error_statuses(error: APIError) -> None:
    plugin = DefaultBinder(None, FakeHandle(api=FailingAPI(error)))
    status = await plugin.bind(CycleState(), make_pod("web", "shop").obj(), "node-1")
    # The server's words alone, as client-go's error reads on upstream's Event.
    assert status.code is Code.ERROR
    assert status.message() == error.text
    assert status.plugin == ""


async def test_other_exceptions_are_not_swallowed() -> None:
    class Broken(RecordingAPI):
        async def bind(self, pod: Pod, node_name: str) -> None:
            raise RuntimeError("bug")

    plugin = DefaultBinder(None, FakeHandle(api=Broken()))
    with pytest.raises(RuntimeError):
        await plugin.bind(CycleState(), make_pod("web").obj(), "node-1")
