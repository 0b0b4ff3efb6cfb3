"""HTTP requests to the API server as raw JSON, on the connection pool of a kubernetes_asyncio
`ApiClient`.

The ApiClient contributes what is hard to get right alone: the TLS context and client
certificate from the kubeconfig (in its pool's connector), bearer tokens (refreshed for
in-cluster service accounts), and the User-Agent. Its request path is bypassed on purpose:
building its model objects costs about twenty times more than parsing (and its Binding model
cannot even decode the server's answer to a successful binding), and its session trusts the
environment, which costs two thread-pool round trips per request (a netrc lookup and a proxy
lookup). Requests go through a session of our own on the same connector instead, with bodies
encoded and parsed by orjson (`json_codec`), and the proxy the environment names (HTTPS_PROXY,
NO_PROXY, as client-go reads them) looked up once. Writes whose answer is not needed (`send`:
Bindings and Events, made per pod, status and merge patches, deletes) skip aiohttp's client
altogether when no proxy is in the way, over keep-alive connections of their own with the same
TLS context (`http1`).

Every request first takes a token from the client-side rate limiter, like client-go's. A
`RequestObserver`, once set, hears of each wait and each request, as client-go's rest_client_*
metrics do.
"""

from __future__ import annotations

import asyncio
import ssl
import sys
from collections.abc import AsyncGenerator
from collections.abc import AsyncIterable
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from typing import Any
from typing import Protocol
from typing import TypeVar
from urllib.parse import urlencode
from urllib.parse import urlsplit

import aiohttp
from aiohttp.helpers import get_env_proxy_for_url
from yarl import URL

from scheduler.cluster.kube.client_library import ApiClient
from scheduler.cluster.kube.errors import NO_RESPONSE
from scheduler.cluster.kube.errors import error_from_response
from scheduler.cluster.kube.http1 import ExchangeErrors
from scheduler.cluster.kube.http1 import Http1Pool
from scheduler.cluster.kube.http1 import request_head
from scheduler.cluster.kube.json_codec import decode
from scheduler.cluster.kube.json_codec import encode
from scheduler.cluster.kube.rate_limit import TokenBucket
from scheduler.cluster.send_gate import check_before_sending
from scheduler.framework.clock import Clock
from scheduler.framework.clock import SystemClock
from scheduler.framework.errors import APIError
from scheduler.observability import V_DEBUG
from scheduler.observability import enabled
from scheduler.observability import get_logger
from scheduler.observability import log_v

logger = get_logger(__name__)

Query = Iterable[tuple[str, str]]

JSON = "application/json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"

DEFAULT_REQUEST_TIMEOUT = 60.0
CONNECT_TIMEOUT = 30.0
# A request whose connection delivers no byte for this long is presumed dead. client-go notices
# a dead HTTP/2 connection by a health ping after 30 s of silence (then 15 s for the answer);
# HTTP/1.1 has no ping, so a read-idle limit plays that part. The API server answers ordinary
# requests in far less, and a failed request closes its connection instead of pooling it, so
# every dead connection is gone from the pool within this time.
READ_IDLE_TIMEOUT = 30.0
# Transport failures a request can end in; they become APIError(NO_RESPONSE, ...).
_TRANSPORT_ERRORS = (aiohttp.ClientError, TimeoutError)
# How often client-go sends a request again after a Retry-After (rest.Request's maxRetries).
MAX_RETRY_AFTER_RETRIES = 10
T = TypeVar("T")
# Watch events carrying large objects exceed aiohttp's default read buffer (etcd allows objects
# of up to 1.5 MiB); the ApiClient's own session reads with this size too.
READ_BUFFER_SIZE = 2**21


class RequestObserver(Protocol):
    """Hears how long requests waited for the rate limiter and how they went."""

    def rate_limited(self, method: str, host: str, seconds: float) -> None: ...

    def request(self, method: str, host: str, code: int, seconds: float, *, sent: int) -> None:
        """One request answered with `code` (0: no answer) after `seconds`."""

    def response_size(self, method: str, host: str, received: int) -> None:
        """The body of an answer read whole (not a stream) was `received` bytes."""


class Transport:
    def __init__(
        self,
        api_client: ApiClient,
        limiter: TokenBucket,
        *,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
        clock: Clock | None = None,
    ) -> None:
        self._api = api_client
        self._limiter = limiter
        self._request_timeout = request_timeout
        self._request_limits = aiohttp.ClientTimeout(
            total=request_timeout, sock_connect=CONNECT_TIMEOUT, sock_read=READ_IDLE_TIMEOUT
        )
        self._streams: set[aiohttp.ClientResponse] = set()
        self._closed = False
        self._clock: Clock = clock if clock is not None else SystemClock()
        configuration = api_client.configuration
        self._base_url = str(configuration.host)
        self._host = str(urlsplit(self._base_url).netloc)
        self._server_hostname: str | None = configuration.tls_server_name or None
        self._proxy = _proxy_for(configuration.proxy, configuration.proxy_headers, self._base_url)
        # The ApiClient's connector (TLS context, pool size); the ApiClient closes it.
        self._session = aiohttp.ClientSession(
            connector=api_client.rest_client.pool_manager.connector,
            connector_owner=False,
            read_bufsize=READ_BUFFER_SIZE,
        )
        # One slot per pooled connection, taken before the send gate is asked and given back
        # once the answer is released: a request that passed the gate never then waits for a
        # connection (which could outlast the tenure the gate checked).
        self._slots = asyncio.Semaphore(self.connection_limit or sys.maxsize)
        # What the server's base URL puts before every path (usually nothing).
        self._path_prefix = ""
        self._http1 = self._http1_pool(api_client)
        self.observer: RequestObserver | None = None

    def _http1_pool(self, api_client: ApiClient) -> Http1Pool | None:
        """The pool `send` uses: over the connector's TLS context, when no proxy is in the way
        (None otherwise, and `send` goes through aiohttp)."""
        if self._proxy:
            return None
        split = urlsplit(self._base_url)
        tls = getattr(api_client.rest_client.pool_manager.connector, "_ssl", None)
        if split.scheme == "https" and not isinstance(tls, ssl.SSLContext):
            return None
        if split.scheme not in ("http", "https") or not split.hostname:
            return None
        self._path_prefix = split.path.rstrip("/")
        return Http1Pool(
            split.hostname,
            split.port or (443 if split.scheme == "https" else 80),
            tls=tls if split.scheme == "https" else None,
            server_hostname=self._server_hostname,
            clock=self._clock,
            max_idle=self.connection_limit or sys.maxsize,
        )

    @property
    def connection_limit(self) -> int:
        """How many connections the pool may hold open at once."""
        connector = self._session.connector
        return int(connector.limit) if connector is not None else 0

    async def request(
        self,
        method: str,
        path: str,
        *,
        query: Query = (),
        body: Mapping[str, Any] | None = None,
        content_type: str = JSON,
    ) -> dict[str, Any]:
        """Send one request and return the parsed JSON answer ({} if it had no body)."""

        async def once() -> dict[str, Any]:
            limits = self._request_limits
            response = await self._send(method, path, query, body, content_type, limits)
            data = await self._read_whole(method, path, response)
            try:
                parsed = decode(data) if data else {}
            except ValueError as exc:
                # A proxy's page, say: an error for the caller to retry, as client-go returns
                # its decoding error, not an exception from deep inside the caller's loop.
                raise APIError(
                    NO_RESPONSE, f"{method} {path}: the answer is not JSON: {exc}"
                ) from exc
            return parsed if isinstance(parsed, dict) else {}

        return await self._retrying(method, path, once)

    async def send(
        self, method: str, path: str, *, body: Mapping[str, Any] | None, content_type: str = JSON
    ) -> None:
        """Send one request whose answer the caller has no use for (a Binding's Status, the
        Event just created): it is read, so the connection can be reused, but not parsed.
        Errors raise as from `request`."""
        await self._retrying(
            method, path, lambda: self._send_once(method, path, body, content_type)
        )

    async def _retrying(self, method: str, path: str, attempt: Callable[[], Awaitable[T]]) -> T:
        """`attempt`, made again as client-go makes a request again when the server answers 429
        or a 5xx with Retry-After: after that many seconds, up to ten times."""
        retries = 0
        while True:
            try:
                return await attempt()
            except APIError as error:
                wait = _retry_wait(error)
                if wait is None or retries == MAX_RETRY_AFTER_RETRIES:
                    raise
                retries += 1
                log_v(
                    logger,
                    V_DEBUG,
                    "Got a Retry-After response",
                    verb=method,
                    path=path,
                    seconds=wait,
                    attempt=retries,
                )
                await self._clock.sleep(wait)

    async def _send_once(
        self, method: str, path: str, body: Mapping[str, Any] | None, content_type: str
    ) -> None:
        if self._http1 is None:
            limits = self._request_limits
            response = await self._send(method, path, (), body, content_type, limits)
            await self._read_whole(method, path, response)
            return
        waited = await self._admit(method, path)
        headers = self._headers(content_type)
        headers["Host"] = self._host
        data = encode_body(body) if body is not None else b""
        started = await self._take_slot(method, waited)
        try:
            await self._api.update_params_for_auth(headers, [], ["BearerToken"])
            head = request_head(method, self._path_prefix + path, headers, len(data))
            try:
                async with asyncio.timeout(self._request_timeout):
                    answer = await self._http1.exchange(
                        head,
                        data,
                        connect_timeout=CONNECT_TIMEOUT,
                        answer_timeout=READ_IDLE_TIMEOUT,
                    )
            except ExchangeErrors as error:
                self._observe(method, NO_RESPONSE, started, data)
                raise _no_response(method, path, error) from error
        finally:
            self._slots.release()
        if enabled(V_DEBUG):
            logger.debug("API request", verb=method, path=path, status=answer.status)
        self._observe(method, answer.status, started, data)
        self._observe_size(method, len(answer.body))
        if answer.status >= 400:
            retry_after = answer.headers.get("retry-after")
            raise error_from_response(answer.status, answer.body, answer.reason, retry_after)

    async def _read_whole(self, method: str, path: str, response: aiohttp.ClientResponse) -> bytes:
        """The answer's body, once it has all arrived; an error status raises."""
        try:
            data = await response.read()
        except _TRANSPORT_ERRORS as error:
            raise _no_response(method, path, error) from error
        finally:
            response.release()
            self._slots.release()
        self._observe_size(method, len(data))
        if response.status >= 400:
            raise _error(response, data)
        return data

    async def stream_lines(
        self, path: str, *, query: Query = (), read_timeout: float
    ) -> AsyncGenerator[bytes, None]:
        """GET a streaming response (a watch) and yield its newline-separated JSON documents.

        The stream ends when the server ends it or the transport is closed; a connection that
        goes silent for `read_timeout` seconds, or breaks, raises APIError(NO_RESPONSE).
        """
        limits = aiohttp.ClientTimeout(sock_connect=CONNECT_TIMEOUT, sock_read=read_timeout)
        # Not rate limited, as client-go's watches are not: a watch is one request for minutes
        # of events, and one reconnecting must not queue behind a burst of Bindings while the
        # caches fall behind.
        response = await self._send("GET", path, query, None, JSON, limits, rate_limited=False)
        self._streams.add(response)
        try:
            if response.status >= 400:
                data = await response.read()
                raise _error(response, data)
            async for line in split_lines(response.content.iter_any()):
                yield line
        except _TRANSPORT_ERRORS as error:
            if self._closed:
                return
            raise _no_response("GET", path, error) from error
        finally:
            self._streams.discard(response)
            response.close()
            self._slots.release()

    async def close(self) -> None:
        """End open streams, then close the connection pool."""
        self._closed = True
        for response in list(self._streams):
            response.close()
        if self._http1 is not None:
            self._http1.close()
        await self._session.close()
        await self._api.close()

    async def _send(
        self,
        method: str,
        path: str,
        query: Query,
        body: Mapping[str, Any] | None,
        content_type: str,
        time_limits: aiohttp.ClientTimeout,
        *,
        rate_limited: bool = True,
    ) -> aiohttp.ClientResponse:
        waited = await self._admit(method, path, rate_limited=rate_limited)
        headers = self._headers(content_type)
        data = encode_body(body) if body is not None else None
        url = self._base_url + path
        params = list(query)
        if params:
            url += "?" + urlencode(params)
        # Given back by the caller once it has released the answer (or here, on failure).
        started = await self._take_slot(method, waited)
        try:
            try:
                # Adds the bearer token when the configuration has one (refreshing it first if
                # it expires); certificates are in the connector's TLS context already.
                await self._api.update_params_for_auth(headers, [], ["BearerToken"])
                response = await self._session.request(
                    method,
                    url,
                    data=data,
                    headers=headers,
                    timeout=time_limits,
                    server_hostname=self._server_hostname,
                    **self._proxy,
                )
            except _TRANSPORT_ERRORS as error:
                self._observe(method, NO_RESPONSE, started, data)
                raise _no_response(method, path, error) from error
        except BaseException:
            self._slots.release()
            raise
        if enabled(V_DEBUG):
            logger.debug("API request", verb=method, path=path, status=response.status)
        self._observe(method, response.status, started, data)
        return response

    async def _admit(self, method: str, path: str, *, rate_limited: bool = True) -> float:
        """Wait for the rate limiter (unless not `rate_limited`); returns how long that took."""
        if self._closed:
            raise APIError(NO_RESPONSE, f"{method} {path}: the client is closed")
        queued = self._clock.now()
        if rate_limited:
            await self._limiter.acquire()
        return self._clock.now() - queued

    async def _take_slot(self, method: str, waited: float) -> float:
        """Take a connection slot, then ask the send gate (holding the slot, so as late as it
        can be); returns when the request starts. The caller gives the slot back, unless this
        raises."""
        await self._slots.acquire()
        try:
            check_before_sending(method)
        except BaseException:
            self._slots.release()
            raise
        if self.observer is not None:
            self.observer.rate_limited(method, self._host, waited)
        return self._clock.now()

    def _headers(self, content_type: str) -> dict[str, str]:
        return {"Accept": JSON, "Content-Type": content_type, **self._api.default_headers}

    def _observe(self, method: str, code: int, started: float, data: bytes | None) -> None:
        if self.observer is None:
            return
        sent = len(data) if data is not None else 0
        seconds = self._clock.now() - started
        self.observer.request(method, self._host, code, seconds, sent=sent)

    def _observe_size(self, method: str, received: int) -> None:
        if self.observer is not None:
            self.observer.response_size(method, self._host, received)


async def split_lines(chunks: AsyncIterable[bytes]) -> AsyncGenerator[bytes, None]:
    """The non-blank lines of a byte stream whose chunks may end anywhere, even mid-line."""
    pending = bytearray()
    async for chunk in chunks:
        start = 0
        newline = chunk.find(b"\n")
        while newline >= 0:
            pending += chunk[start:newline]
            if pending.strip():
                yield bytes(pending)
            pending.clear()
            start = newline + 1
            newline = chunk.find(b"\n", start)
        pending += chunk[start:]
    if pending.strip():
        yield bytes(pending)


def _proxy_for(proxy: str | None, headers: Mapping[str, str] | None, url: str) -> dict[str, Any]:
    """The proxy arguments for every request to `url`: the configuration's proxy, or the one
    the environment names for it (none when NO_PROXY covers it)."""
    if proxy:
        return {"proxy": proxy, "proxy_headers": dict(headers) if headers else None}
    try:
        env_proxy, auth = get_env_proxy_for_url(URL(url))
    except LookupError:
        return {}
    return {"proxy": env_proxy, "proxy_auth": auth}


def encode_body(body: Mapping[str, Any]) -> bytes:
    """`body` as JSON. Bodies are nearly always plain dicts and lists already, which orjson
    encodes as they are; anything else it refuses (another kind of mapping, a key that is not
    a string) is made plain first."""
    try:
        return encode(body)
    except TypeError:
        return encode(_plain(body))


def _plain(value: Any) -> Any:
    """JSON-shaped data as plain dicts and lists: the ApiClient serialises any other mapping
    as if it were one of its models."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_plain(v) for v in value]
    return value


def _error(response: aiohttp.ClientResponse, data: bytes) -> APIError:
    retry_after = response.headers.get("Retry-After")
    return error_from_response(response.status, data, response.reason or "", retry_after)


def _no_response(method: str, path: str, error: BaseException) -> APIError:
    detail = str(error) or type(error).__name__
    failure = APIError(NO_RESPONSE, f"{method} {path}: no answer from the API server: {detail}")
    failure.connection_refused = _refused(error)
    return failure


def _refused(error: BaseException) -> bool:
    """Whether nothing listened: the connection was refused (aiohttp keeps the OS error)."""
    causes = (error, error.__cause__, getattr(error, "os_error", None))
    return any(isinstance(cause, ConnectionRefusedError) for cause in causes)


def _retry_wait(error: APIError) -> float | None:
    """Seconds client-go waits before sending a request again: a 429 or 5xx answer's
    Retry-After; None when it does not send it again."""
    if error.retry_after is None or not (error.status == 429 or error.status >= 500):
        return None
    return error.retry_after
