"""A tiny synchronous HTTPS client for the test control plane.

Deliberately independent of kubernetes_asyncio: the harness must be able to check the cluster
even when the adapter under test is broken.
"""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from typing import NamedTuple

DEFAULT_TIMEOUT_S = 30.0


class ApiResponse(NamedTuple):
    """Status code and decoded body: parsed JSON when the server sent JSON, else text."""

    status: int
    body: Any


class ApiClient:
    """Speaks HTTPS (given a CA) or plain HTTP, with a client certificate or a bearer token."""

    def __init__(
        self,
        server_url: str,
        ca_path: Path | None = None,
        *,
        client_cert: tuple[Path, Path] | None = None,
        token: str | None = None,
    ) -> None:
        self.server_url = server_url.rstrip("/")
        self._token = token
        self._ssl: ssl.SSLContext | None = None
        if ca_path is not None:
            self._ssl = ssl.create_default_context(cafile=str(ca_path))
        if client_cert is not None and self._ssl is not None:
            cert_path, key_path = client_cert
            self._ssl.load_cert_chain(str(cert_path), str(key_path))

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        content_type: str = "application/json",
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> ApiResponse:
        """Sends one request; HTTP error statuses are returned, not raised."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.server_url + path, data=data, method=method)
        req.add_header("Accept", "application/json")
        if data is not None:
            req.add_header("Content-Type", content_type)
        if self._token is not None:
            req.add_header("Authorization", f"Bearer {self._token}")
        try:
            with urllib.request.urlopen(req, timeout=timeout_s, context=self._ssl) as resp:
                return ApiResponse(resp.status, _decode(resp.read(), resp.headers))
        except urllib.error.HTTPError as err:
            with err:
                return ApiResponse(err.code, _decode(err.read(), err.headers))

    def get(self, path: str) -> ApiResponse:
        return self.request("GET", path)

    def post(self, path: str, body: Any) -> ApiResponse:
        return self.request("POST", path, body)

    def delete(self, path: str) -> ApiResponse:
        return self.request("DELETE", path)

    def watch(self, path: str, *, timeout_s: float) -> Iterator[dict[str, Any]]:
        """The events of a watch (`path` carries `watch=1` and its other parameters), one
        decoded JSON object each, until the server ends the stream; a silent stream raises
        TimeoutError after `timeout_s`."""
        req = urllib.request.Request(self.server_url + path, method="GET")
        req.add_header("Accept", "application/json")
        if self._token is not None:
            req.add_header("Authorization", f"Bearer {self._token}")
        with urllib.request.urlopen(req, timeout=timeout_s, context=self._ssl) as resp:
            for line in resp:
                if line.strip():
                    event: dict[str, Any] = json.loads(line)
                    yield event


def _decode(raw: bytes, headers: Any) -> Any:
    text = raw.decode(errors="replace")
    if "json" in str(headers.get("Content-Type", "")):
        return json.loads(text) if text else None
    return text
