"""One HTTP/1.1 request and its answer over keep-alive connections of our own, for the writes
whose answer the scheduler does not read: the two it makes per pod (a Binding and an Event),
status and merge patches, and deletes.

aiohttp's client spends 180-250 µs of CPU on a small POST over TLS on a 2-core machine (a
ClientRequest, header multidicts, a writer task, a response object with streams of its own),
about three times what the exchange itself needs (65 µs); at two writes per pod that is a
large share of the scheduler's CPU per pod. Here the request is one `bytes` written at once,
and the answer's status line and headers are read up to their blank line, then its body by
Content-Length or chunk sizes.

Only what these requests need is supported: no redirects, no compression (none is asked for),
no proxy (a transport with a proxy sends everything through aiohttp). A connection goes back to
the pool only after a complete answer that does not close it; one idle for `KEEPALIVE_S` is
closed rather than reused, before the server's own idle limit could close it under a request.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Mapping
from dataclasses import dataclass

from scheduler.framework.clock import Clock

# aiohttp's keep-alive time for an idle pooled connection.
KEEPALIVE_S = 15.0
# An answer's status line and headers may not be longer than this (asyncio's stream limit).
HEAD_LIMIT = 2**16

# What an exchange that got no (complete) answer raises; `Transport` turns it into APIError.
ExchangeErrors = (OSError, EOFError, asyncio.IncompleteReadError, asyncio.LimitOverrunError)


class MalformedAnswerError(EOFError):
    """The server's bytes are not an HTTP/1.1 answer."""


@dataclass(frozen=True, slots=True)
class Answer:
    status: int
    reason: str
    # Header names in lower case.
    headers: Mapping[str, str]
    body: bytes


@dataclass(slots=True)
class _Connection:
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    idle_since: float = 0.0

    def usable(self, now: float) -> bool:
        return (
            not self.writer.is_closing()
            and not self.reader.at_eof()
            and now - self.idle_since < KEEPALIVE_S
        )


class Http1Pool:
    """Connections to one server (`host`:`port`, TLS with `tls` unless it is None)."""

    def __init__(
        self,
        host: str,
        port: int,
        *,
        tls: ssl.SSLContext | None,
        server_hostname: str | None,
        clock: Clock,
        max_idle: int,
    ) -> None:
        self._host = host
        self._port = port
        self._tls = tls
        self._server_hostname = server_hostname if tls is not None else None
        self._clock = clock
        self._max_idle = max_idle
        self._idle: list[_Connection] = []

    async def exchange(
        self, head: bytes, body: bytes, *, connect_timeout: float, answer_timeout: float
    ) -> Answer:
        """Write `head` (request line and headers, blank line included) and `body`, and read
        the answer. Raises one of `ExchangeErrors`, or TimeoutError."""
        connection = self._reuse()
        if connection is None:
            async with asyncio.timeout(connect_timeout):
                reader, writer = await asyncio.open_connection(
                    self._host,
                    self._port,
                    ssl=self._tls,
                    server_hostname=self._server_hostname,
                    limit=HEAD_LIMIT,
                )
            connection = _Connection(reader, writer)
        try:
            connection.writer.write(head + body)
            async with asyncio.timeout(answer_timeout):
                answer, reusable = await _read_answer(connection.reader)
        except BaseException:
            connection.writer.close()
            raise
        if reusable and len(self._idle) < self._max_idle:
            connection.idle_since = self._clock.now()
            self._idle.append(connection)
        else:
            connection.writer.close()
        return answer

    def close(self) -> None:
        idle, self._idle = self._idle, []
        for connection in idle:
            connection.writer.close()

    def _reuse(self) -> _Connection | None:
        now = self._clock.now()
        while self._idle:
            connection = self._idle.pop()
            if connection.usable(now):
                return connection
            connection.writer.close()
        return None


def request_head(method: str, target: str, headers: Mapping[str, str], length: int) -> bytes:
    """The request line and headers of a request with a body of `length` bytes."""
    lines = [f"{method} {target} HTTP/1.1"]
    lines.extend(f"{name}: {value}" for name, value in headers.items())
    lines.append(f"Content-Length: {length}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


async def _read_answer(reader: asyncio.StreamReader) -> tuple[Answer, bool]:
    """The answer, and whether the connection may carry another request after it."""
    head = await reader.readuntil(b"\r\n\r\n")
    status_line, *lines = head[:-4].decode("latin-1").split("\r\n")
    version, _, rest = status_line.partition(" ")
    code, _, reason = rest.partition(" ")
    if not version.startswith("HTTP/1.") or not code.isdigit():
        raise MalformedAnswerError(f"not an HTTP/1.1 status line: {status_line[:80]!r}")
    status = int(code)
    headers: dict[str, str] = {}
    for line in lines:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    reusable = headers.get("connection", "").lower() != "close" and version != "HTTP/1.0"
    if "chunked" in headers.get("transfer-encoding", "").lower():
        body = await _read_chunks(reader)
    elif "content-length" in headers:
        length = headers["content-length"]
        if not length.isdigit():
            raise MalformedAnswerError(f"bad Content-Length: {length[:40]!r}")
        body = await reader.readexactly(int(length))
    elif status in (204, 304) or status < 200:
        body = b""
    else:
        # Delimited by the server closing the connection.
        body = await reader.read()
        reusable = False
    return Answer(status, reason, headers, body), reusable


async def _read_chunks(reader: asyncio.StreamReader) -> bytes:
    body = bytearray()
    while True:
        size_line = await reader.readuntil(b"\r\n")
        size_text = size_line.split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            raise MalformedAnswerError(f"bad chunk size: {size_text[:40]!r}") from None
        if size == 0:
            # Trailers, if any, up to the blank line that ends the answer.
            while await reader.readuntil(b"\r\n") != b"\r\n":
                pass
            return bytes(body)
        body += await reader.readexactly(size)
        if await reader.readexactly(2) != b"\r\n":
            raise MalformedAnswerError("a chunk does not end with CRLF")
