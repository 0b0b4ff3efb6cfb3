"""POSTs over kept-alive connections, one per thread, for creating a workload quickly.

The test harness's client opens a new TLS connection for every request; creating 15,000
objects that way spends most of its time (and the bench's CPU, which the scheduler under test
shares) in handshakes. Here each creating thread keeps one connection and reuses it.
"""

from __future__ import annotations

import http.client
import json
import ssl
import threading
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from tests.e2e.api_client import ApiResponse

TIMEOUT_S = 30.0


class KeepAlivePoster:
    """Sends JSON POSTs with a client certificate; one connection per calling thread."""

    def __init__(self, server_url: str, ca_path: Path, client_cert: tuple[Path, Path]) -> None:
        parts = urlsplit(server_url)
        if parts.scheme != "https" or parts.hostname is None:
            raise ValueError(f"expected an https:// server URL, got {server_url!r}")
        self._host = parts.hostname
        self._port = parts.port or 443
        self._ssl = ssl.create_default_context(cafile=str(ca_path))
        self._ssl.load_cert_chain(str(client_cert[0]), str(client_cert[1]))
        self._local = threading.local()

    def post(self, path: str, body: Any) -> ApiResponse:
        """One POST; a connection that broke is dropped, and the error raised (an OSError)."""
        data = json.dumps(body).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        connection = self._connection()
        try:
            connection.request("POST", path, body=data, headers=headers)
            response = connection.getresponse()
            raw = response.read()
        except (OSError, http.client.HTTPException) as error:
            connection.close()
            self._local.connection = None
            raise OSError(f"POST {path}: {error}") from error
        is_json = "json" in response.getheader("Content-Type", "")
        parsed = json.loads(raw) if raw and is_json else raw
        return ApiResponse(response.status, parsed)

    def _connection(self) -> http.client.HTTPSConnection:
        connection: http.client.HTTPSConnection | None = getattr(self._local, "connection", None)
        if connection is None:
            connection = http.client.HTTPSConnection(
                self._host, self._port, timeout=TIMEOUT_S, context=self._ssl
            )
            self._local.connection = connection
        return connection
