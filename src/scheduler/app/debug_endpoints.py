"""The secure port's debugging paths, served when `enableProfiling` is true (the default), as
kube-scheduler serves them:

- `PUT /debug/flags/v` with a number as the body changes the log verbosity of the running
  process (`-v`), and answers as klog's setter does; any other method gets 406. `/debug/flags`
  lists the flags that can be set.
- `/debug/pprof/` lists the profiles; `/debug/pprof/profile?seconds=N` samples the CPU for N
  seconds (30 when missing or not a positive whole number) and `/debug/pprof/goroutine` shows
  every asyncio task and thread (`profiling.task_profile`), both in pprof's format unless
  `?debug=1|2` asks for text. Go's other profiles (heap, allocs, block, mutex, threadcreate,
  trace, symbol) describe Go's runtime and have no counterpart here: they answer 404
  "Unknown profile", as Go does for a name it does not know.

Like every path but the health checks, these need an authorized caller: `put` on
`/debug/flags/v`, `get` on the others.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable
from collections.abc import Callable
from typing import Final

from aiohttp import web

from scheduler.app.profiling.cpu_profile import DEFAULT_SECONDS
from scheduler.app.profiling.cpu_profile import CpuProfiler
from scheduler.app.profiling.cpu_profile import ProfilerBusyError
from scheduler.app.profiling.task_profile import routines
from scheduler.app.profiling.task_profile import task_profile
from scheduler.app.profiling.task_profile import task_text
from scheduler.observability import get_logger
from scheduler.observability import set_verbosity

_log = get_logger(__name__)

_DECIMAL: Final = re.compile(r"[+-]?[0-9]+")
_PROFILES: Final = {
    "goroutine": "Stacks of every asyncio task and thread.",
    "profile": "CPU profile, sampled for `seconds` (default 30).",
}

_Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def add_debug_routes(app: web.Application, profiler: CpuProfiler | None = None) -> None:
    """Install the debugging paths on `app`."""
    cpu = profiler if profiler is not None else CpuProfiler()
    # Like Go's handlers, these do not look at the method; only the verbosity setter does.
    routes: list[tuple[str, _Handler]] = [
        ("/debug/flags", _flags_index),
        ("/debug/flags/", _flags_index),
        ("/debug/flags/v", _put_verbosity),
        ("/debug/pprof", _redirect_to_index),
        ("/debug/pprof/", _pprof_index),
        ("/debug/pprof/profile", _cpu_profile_handler(cpu)),
        ("/debug/pprof/goroutine", _task_profile),
        ("/debug/pprof/{name}", _unknown_profile),
    ]
    for path, handler in routes:
        app.router.add_route("*", path, handler)


async def _flags_index(_: web.Request) -> web.Response:
    body = (
        "<html><head><title>/debug/flags/</title></head><body>\nflags:<br>\nv<br>\n</body></html>\n"
    )
    return web.Response(text=body, content_type="text/html")


async def _put_verbosity(request: web.Request) -> web.Response:
    # klog's setter answers in plain text with a newline, without a charset.
    if request.method != "PUT":
        return _plain(406, "unsupported http method\n", charset=False)
    value = await request.text()
    try:
        set_verbosity(_verbosity(value))
    except ValueError as exc:
        return _plain(400, f"failed set klog.logging.verbosity {value}: {exc}\n", charset=False)
    _log.info("Log verbosity changed", verbosity=value)
    return _plain(200, f"successfully set klog.logging.verbosity to {value}\n", charset=False)


def _verbosity(value: str) -> int:
    """`value` as klog reads a level: a decimal int32, nothing around it."""
    if not _DECIMAL.fullmatch(value):
        raise ValueError(f"{value!r} is not a whole decimal number")
    level = int(value, 10)
    if not -(2**31) <= level < 2**31:
        raise ValueError(f"{value} is out of range")
    return level


async def _redirect_to_index(_: web.Request) -> web.Response:
    raise web.HTTPMovedPermanently("/debug/pprof/")


async def _pprof_index(_: web.Request) -> web.Response:
    rows = "".join(
        f'<tr><td><a href="{name}?debug=1">{name}</a></td><td>{about}</td></tr>\n'
        for name, about in _PROFILES.items()
    )
    body = (
        "<html><head><title>/debug/pprof/</title></head><body>\n/debug/pprof/<br>\n"
        f"<table>\n{rows}</table>\n</body></html>\n"
    )
    return web.Response(text=body, content_type="text/html")


def _cpu_profile_handler(profiler: CpuProfiler) -> _Handler:
    async def handle(request: web.Request) -> web.Response:
        try:
            seconds = int(request.query.get("seconds", ""), 10)
        except ValueError:
            seconds = DEFAULT_SECONDS
        if seconds <= 0:
            seconds = DEFAULT_SECONDS
        try:
            profile = await profiler.profile(seconds)
        except ProfilerBusyError as exc:
            return _plain(500, f"Could not enable CPU profiling: {exc}\n")
        return _attachment(profile, "profile")

    return handle


async def _task_profile(request: web.Request) -> web.Response:
    try:
        debug = int(request.query.get("debug", "0"), 10)
    except ValueError:
        debug = 0
    found = routines()
    if debug > 0:
        return _plain(200, task_text(found, debug))
    return _attachment(task_profile(found), "goroutine")


async def _unknown_profile(_: web.Request) -> web.Response:
    return _plain(404, "Unknown profile\n")


def _attachment(profile: bytes, name: str) -> web.Response:
    return web.Response(
        body=profile,
        headers={
            "Content-Type": "application/octet-stream",
            "Content-Disposition": f'attachment; filename="{name}"',
        },
    )


def _plain(status: int, text: str, *, charset: bool = True) -> web.Response:
    content_type = "text/plain; charset=utf-8" if charset else "text/plain"
    return web.Response(
        status=status,
        body=text.encode(),
        headers={"Content-Type": content_type, "X-Content-Type-Options": "nosniff"},
    )
