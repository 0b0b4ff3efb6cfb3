"""POSTing JSON to one extender, with its TLS settings and timeout, reporting failures in the
words kube-scheduler's Go HTTP client uses (they end up in pods' FailedScheduling messages)."""

from __future__ import annotations

import errno
import json
import os
import ssl
import tempfile
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from scheduler.config import Extender
from scheduler.config import ExtenderTLSConfig
from scheduler.config.models import DEFAULT_EXTENDER_HTTP_TIMEOUT_SECONDS
from scheduler.config.models import decode_base64
from scheduler.framework.errors import ConfigError
from scheduler.runtime.extenders.proxy import env_proxy


class ExtenderCallError(Exception):
    """A call to an extender failed; the text is the error upstream would report."""


class ExtenderTransport:
    """One pooled aiohttp session per extender, opened on first use."""

    def __init__(self, config: Extender, *, path: str = "extenders") -> None:
        self.url_prefix = config.url_prefix
        timeout = config.http_timeout or DEFAULT_EXTENDER_HTTP_TIMEOUT_SECONDS
        self._timeout = aiohttp.ClientTimeout(total=timeout)
        self._ssl = _ssl_context(config, path)
        self._server_name = config.tls_config.server_name if config.tls_config else ""
        self._proxy = env_proxy(self.url_prefix)
        self._session: aiohttp.ClientSession | None = None

    def url(self, verb: str) -> str:
        return self.url_prefix.rstrip("/") + "/" + verb

    async def post(self, verb: str, payload: Any) -> Any:
        """The decoded JSON answer to `payload` POSTed at `<urlPrefix>/<verb>`."""
        url = self.url(verb)
        body = json.dumps(payload, separators=(",", ":")).encode()
        headers = {"Content-Type": "application/json"}
        options: dict[str, Any] = dict(self._proxy)
        if url.startswith("https://"):
            options["ssl"] = self._ssl if self._ssl is not None else True
            if self._server_name:
                options["server_hostname"] = self._server_name
        session = self._open()
        try:
            async with session.post(url, data=body, headers=headers, **options) as response:
                if response.status != 200:
                    raise ExtenderCallError(
                        f"failed {verb} with extender at URL {url}, code {response.status}"
                    )
                text = await response.read()
        except TimeoutError:
            raise ExtenderCallError(
                f'Post "{url}": context deadline exceeded '
                "(Client.Timeout exceeded while awaiting headers)"
            ) from None
        except aiohttp.ClientConnectorError as exc:
            raise ExtenderCallError(f'Post "{url}": {_dial_error(url, exc)}') from None
        except aiohttp.ClientError as exc:
            raise ExtenderCallError(f'Post "{url}": {exc}') from None
        try:
            return json.loads(text)
        except ValueError as exc:
            raise ExtenderCallError(
                f"extender at URL {url} answered with invalid JSON: {exc}"
            ) from None

    def _open(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(timeout=self._timeout)
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None


def _dial_error(url: str, exc: aiohttp.ClientConnectorError) -> str:
    """Go's `dial tcp host:port: connect: connection refused` for a refused connection."""
    parts = urlsplit(url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    address = f"{parts.hostname}:{port}"
    if exc.os_error is not None and exc.os_error.errno == errno.ECONNREFUSED:
        return f"dial tcp {address}: connect: connection refused"
    return f"dial tcp {address}: {exc.os_error or exc}"


def _ssl_context(config: Extender, path: str) -> ssl.SSLContext | None:
    """The client TLS settings as client-go builds them from a rest.Config: with
    `enableHTTPS` and no CA the server is not verified; an insecure config with a CA is an
    error, as upstream's."""
    tls = config.tls_config or ExtenderTLSConfig()
    has_ca = bool(tls.ca_file or tls.ca_data)
    insecure = tls.insecure or (config.enable_https and not has_ca)
    if tls.insecure and has_ca:
        raise ConfigError(
            f"{path}.tlsConfig: specifying a root certificates file with the insecure flag "
            "is not allowed"
        )
    has_cert = bool(tls.cert_file or tls.cert_data)
    has_key = bool(tls.key_file or tls.key_data)
    if has_cert != has_key:
        raise ConfigError(
            f"{path}.tlsConfig: a client certificate and its key must be given together"
        )
    if not (insecure or has_ca or has_cert or tls.server_name):
        return None
    # Only the configured CA is trusted when one is given, as client-go's pool holds only it.
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    if not has_ca:
        context.load_default_certs()
    if insecure:
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    try:
        if tls.ca_file:
            context.load_verify_locations(cafile=tls.ca_file)
        if tls.ca_data:
            context.load_verify_locations(cadata=_decoded(tls.ca_data, f"{path}.tlsConfig.caData"))
        if has_cert:
            _load_client_pair(context, tls, f"{path}.tlsConfig")
    except (OSError, ssl.SSLError) as exc:
        raise ConfigError(f"{path}.tlsConfig: {exc}") from exc
    return context


def _decoded(data: str, path: str) -> str:
    try:
        return decode_base64(data).decode()
    except ValueError as exc:
        raise ConfigError(f"{path}: not base64-encoded PEM: {exc}") from exc


def _load_client_pair(context: ssl.SSLContext, tls: ExtenderTLSConfig, path: str) -> None:
    """ssl reads a certificate pair only from files: inline data goes through temporary ones,
    removed at once."""
    written: list[str] = []
    try:
        cert = tls.cert_file or _temporary(_decoded(tls.cert_data, f"{path}.certData"), written)
        key = tls.key_file or _temporary(_decoded(tls.key_data, f"{path}.keyData"), written)
        context.load_cert_chain(cert, key)
    finally:
        for name in written:
            os.unlink(name)


def _temporary(text: str, written: list[str]) -> str:
    handle, name = tempfile.mkstemp(suffix=".pem")
    written.append(name)
    with os.fdopen(handle, "w") as file:
        file.write(text)
    return name
