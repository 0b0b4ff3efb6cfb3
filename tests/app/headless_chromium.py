"""Headless Chromium driven over the DevTools protocol: load a page, list every request the
page made, run a script in it and take a screenshot.

The browser's own traffic (update checks and the like) goes to a proxy that refuses every
connection, so a test never reaches the network; requests are counted per page, from the
page's Network domain, so that traffic is not mistaken for the page's.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import re
import shutil
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass
from dataclasses import field
from typing import Any

import aiohttp

_LISTENING = re.compile(r"DevTools listening on (ws://\S+)")
START_SECONDS = 30.0
CALL_SECONDS = 30.0


def chromium_binary() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found is not None:
            return found
    raise RuntimeError(
        "no Chromium on PATH; install Debian's package (apt-get install chromium), as .ci/run does"
    )


@dataclass
class LoadedPage:
    url: str
    requests: list[str] = field(default_factory=list)
    screenshot: bytes = b""


class _Connection:
    """One DevTools WebSocket: calls answered by id, events kept per session."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse) -> None:
        self._ws = ws
        self._ids = itertools.count(1)
        self._answers: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self.events: list[dict[str, Any]] = []
        self._event_arrived = asyncio.Condition()
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for message in self._ws:
            data = message.json()
            if "id" in data:
                future = self._answers.pop(data["id"])
                if "error" in data:
                    future.set_exception(RuntimeError(f"DevTools: {data['error']}"))
                else:
                    future.set_result(data.get("result", {}))
            else:
                async with self._event_arrived:
                    self.events.append(data)
                    self._event_arrived.notify_all()

    async def call(self, method: str, session: str | None = None, **params: Any) -> dict[str, Any]:
        ident = next(self._ids)
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._answers[ident] = future
        message: dict[str, Any] = {"id": ident, "method": method, "params": params}
        if session is not None:
            message["sessionId"] = session
        await self._ws.send_json(message)
        return await asyncio.wait_for(future, CALL_SECONDS)

    async def wait_event(self, method: str, session: str, after: int) -> None:
        """Until `method` arrives on `session` as event number `after` or later."""

        def seen() -> bool:
            return any(
                e["method"] == method and e.get("sessionId") == session for e in self.events[after:]
            )

        async with self._event_arrived:
            await asyncio.wait_for(self._event_arrived.wait_for(seen), CALL_SECONDS)

    async def close(self) -> None:
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader


class Browser:
    def __init__(self, connection: _Connection) -> None:
        self._cdp = connection

    async def load(self, url: str, width: int = 1280, height: int = 1600) -> tuple[LoadedPage, str]:
        """Open `url` in a new tab, wait for its load event, and return what it requested,
        a full-page screenshot, and the tab's session for `evaluate`."""
        target = await self._cdp.call("Target.createTarget", url="about:blank")
        attached = await self._cdp.call(
            "Target.attachToTarget", targetId=target["targetId"], flatten=True
        )
        session = str(attached["sessionId"])
        await self._cdp.call("Network.enable", session)
        await self._cdp.call("Page.enable", session)
        await self._cdp.call(
            "Emulation.setDeviceMetricsOverride",
            session,
            width=width,
            height=height,
            deviceScaleFactor=1,
            mobile=False,
        )
        before = len(self._cdp.events)
        await self._cdp.call("Page.navigate", session, url=url)
        await self._cdp.wait_event("Page.loadEventFired", session, before)
        shot = await self._cdp.call("Page.captureScreenshot", session, format="png")
        page = LoadedPage(url=url, screenshot=base64.b64decode(shot["data"]))
        page.requests = [
            str(e["params"]["request"]["url"])
            for e in self._cdp.events
            if e["method"] == "Network.requestWillBeSent" and e.get("sessionId") == session
        ]
        return page, session

    async def evaluate(self, session: str, expression: str) -> Any:
        answer = await self._cdp.call(
            "Runtime.evaluate", session, expression=expression, returnByValue=True
        )
        if "exceptionDetails" in answer:
            raise RuntimeError(f"script failed: {answer['exceptionDetails']}")
        return answer["result"].get("value")


@contextlib.asynccontextmanager
async def headless_chromium() -> AsyncIterator[Browser]:
    with tempfile.TemporaryDirectory(prefix="chromium-profile-") as profile:
        process = await asyncio.create_subprocess_exec(
            chromium_binary(),
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--remote-debugging-port=0",
            f"--user-data-dir={profile}",
            # Port 9 (discard) refuses connections: the browser's own traffic goes nowhere.
            "--proxy-server=http://127.0.0.1:9",
            "--proxy-bypass-list=<-loopback>",
            "--disable-background-networking",
            "--disable-component-update",
            "--no-first-run",
            "--no-default-browser-check",
            "about:blank",
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
        assert process.stderr is not None
        drain: asyncio.Task[None] | None = None
        try:
            endpoint = await asyncio.wait_for(_endpoint(process.stderr), START_SECONDS)
            # Keep reading stderr so a chatty browser never blocks on a full pipe.
            drain = asyncio.create_task(_drain(process.stderr))
            async with (
                aiohttp.ClientSession() as http,
                http.ws_connect(endpoint, max_msg_size=0) as ws,
            ):
                connection = _Connection(ws)
                try:
                    yield Browser(connection)
                finally:
                    await connection.close()
        finally:
            if process.returncode is None:
                process.kill()
            await process.wait()
            if drain is not None:
                drain.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await drain


async def _endpoint(stderr: asyncio.StreamReader) -> str:
    while line := await stderr.readline():
        found = _LISTENING.search(line.decode(errors="replace"))
        if found:
            return found.group(1)
    raise RuntimeError("Chromium exited before it opened its DevTools port")


async def _drain(stream: asyncio.StreamReader) -> None:
    while await stream.readline():
        pass
