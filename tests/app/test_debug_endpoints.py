"""The secure port's debugging paths over real HTTPS: present only with `enableProfiling`, and
answering as kube-scheduler's do."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from collections.abc import Iterator

import aiohttp
import pytest

from scheduler.app.http_server import HealthServer
from scheduler.observability import SchedulerMetrics
from scheduler.observability import reset_logging
from scheduler.observability import verbosity
from tests.app.profiling.pprof_reader import read_profile
from tests.app.test_http_server import trusting


async def _serve(profiling: bool) -> tuple[HealthServer, str, aiohttp.ClientSession]:
    server = HealthServer(
        SchedulerMetrics(), healthz={}, readiness={}, configz=dict, profiling=profiling
    )
    port = await server.start("127.0.0.1", 0)
    assert server.self_signed_ca_pem is not None
    connector = aiohttp.TCPConnector(ssl=trusting(server.self_signed_ca_pem))
    return server, f"https://127.0.0.1:{port}", aiohttp.ClientSession(connector=connector)


@pytest.fixture
async def port() -> AsyncIterator[tuple[str, aiohttp.ClientSession]]:
    server, base, client = await _serve(profiling=True)
    async with client:
        yield base, client
    await server.stop()


@pytest.fixture(autouse=True)
def _verbosity_restored() -> Iterator[None]:
    yield
    reset_logging()


async def _call(
    port: tuple[str, aiohttp.ClientSession], method: str, path: str, body: str | None = None
) -> tuple[int, str, str]:
    base, client = port
    async with client.request(method, base + path, data=body, allow_redirects=False) as answer:
        return answer.status, await answer.text(), answer.headers.get("Content-Type", "")


async def test_put_verbosity_changes_the_running_verbosity(
    port: tuple[str, aiohttp.ClientSession],
) -> None:
    status, body, content_type = await _call(port, "PUT", "/debug/flags/v", "5")
    assert (status, body, content_type) == (
        200,
        "successfully set klog.logging.verbosity to 5\n",
        "text/plain",
    )
    assert verbosity() == 5


@pytest.mark.parametrize(
    ("method", "body", "status", "text"),
    [
        ("GET", None, 406, "unsupported http method\n"),
        ("POST", "3", 406, "unsupported http method\n"),
        ("PUT", "three", 400, "failed set klog.logging.verbosity three: "),
        ("PUT", "3\n", 400, "failed set klog.logging.verbosity 3\n: "),
        ("PUT", "-1", 400, "failed set klog.logging.verbosity -1: verbosity must not be negative"),
        ("PUT", "4294967296", 400, "failed set klog.logging.verbosity 4294967296: "),
    ],
)
async def test_anything_but_a_put_of_a_level_is_refused_and_changes_nothing(
    port: tuple[str, aiohttp.ClientSession], method: str, body: str | None, status: int, text: str
) -> None:
    before = verbosity()
    answer_status, answer, _ = await _call(port, method, "/debug/flags/v", body)
    assert (answer_status, answer[: len(text)]) == (status, text)
    assert verbosity() == before


async def test_the_cpu_profile_is_a_pprof_profile(
    port: tuple[str, aiohttp.ClientSession],
) -> None:
    base, client = port
    async with client.get(base + "/debug/pprof/profile?seconds=1") as answer:
        assert answer.status == 200
        assert answer.headers["Content-Disposition"] == 'attachment; filename="profile"'
        profile = read_profile(await answer.read())
    assert profile.sample_types == [("samples", "count"), ("cpu", "nanoseconds")]
    assert 1_000_000_000 <= profile.duration_nanos < 5_000_000_000


async def test_two_cpu_profiles_at_once_get_gos_error(
    port: tuple[str, aiohttp.ClientSession],
) -> None:
    base, client = port

    async def profile() -> tuple[int, bytes]:
        async with client.get(base + "/debug/pprof/profile?seconds=1") as answer:
            return answer.status, await answer.read()

    answers = sorted(await asyncio.gather(profile(), profile()))
    # Whichever came first samples; the other is refused while it does.
    assert [status for status, _ in answers] == [200, 500]
    assert answers[1][1] == b"Could not enable CPU profiling: cpu profiling already in use\n"


async def test_the_task_profile_lists_the_serving_task_in_text_and_pprof(
    port: tuple[str, aiohttp.ClientSession],
) -> None:
    status, text, _ = await _call(port, "GET", "/debug/pprof/goroutine?debug=2")
    assert status == 200
    assert "[running]:" in text
    assert "in _task_profile" in text
    base, client = port
    async with client.get(base + "/debug/pprof/goroutine") as answer:
        profile = read_profile(await answer.read())
    assert profile.sample_types == [("goroutine", "count")]
    assert profile.total("_task_profile") == 1


@pytest.mark.parametrize("name", ["heap", "allocs", "block", "mutex", "threadcreate", "trace"])
async def test_gos_runtime_profiles_are_unknown_here(
    port: tuple[str, aiohttp.ClientSession], name: str
) -> None:
    status, body, content_type = await _call(port, "GET", f"/debug/pprof/{name}")
    assert (status, body, content_type) == (404, "Unknown profile\n", "text/plain; charset=utf-8")


async def test_the_indexes_list_what_is_served(port: tuple[str, aiohttp.ClientSession]) -> None:
    status, body, _ = await _call(port, "GET", "/debug/pprof/")
    assert status == 200
    assert 'href="goroutine?debug=1"' in body
    assert 'href="profile?debug=1"' in body
    assert (await _call(port, "GET", "/debug/pprof"))[0] == 301
    status, body, _ = await _call(port, "GET", "/debug/flags")
    assert status == 200
    assert "v<br>" in body


async def test_without_profiling_there_are_no_debugging_paths() -> None:
    server, base, client = await _serve(profiling=False)
    async with client:
        for method, path in [
            ("PUT", "/debug/flags/v"),
            ("GET", "/debug/pprof/"),
            ("GET", "/debug/pprof/profile?seconds=1"),
            ("GET", "/debug/pprof/goroutine"),
        ]:
            async with client.request(method, base + path, data="3") as answer:
                assert answer.status == 404, (method, path)
    await server.stop()
    assert verbosity() == 0


@pytest.mark.parametrize(
    ("method", "path", "status"),
    [
        ("POST", "/debug/pprof/", 200),
        ("HEAD", "/debug/pprof/", 200),
        ("DELETE", "/debug/flags", 200),
        ("POST", "/debug/pprof/goroutine?debug=1", 200),
        ("POST", "/debug/pprof/heap", 404),
    ],
)
async def test_the_debug_paths_answer_any_method_as_gos_handlers(
    port: tuple[str, aiohttp.ClientSession], method: str, path: str, status: int
) -> None:
    assert (await _call(port, method, path))[0] == status
