"""Kubeconfig files with every credential embedded, so they work from any directory."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import yaml


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def write_kubeconfig(
    path: Path,
    *,
    server_url: str,
    ca_pem: bytes,
    user: str,
    client_cert_pem: bytes | None = None,
    client_key_pem: bytes | None = None,
    token: str | None = None,
) -> Path:
    """Writes a single-context kubeconfig for `user`, with a client cert or a bearer token."""
    credentials: dict[str, Any] = {}
    if client_cert_pem is not None and client_key_pem is not None:
        credentials["client-certificate-data"] = _b64(client_cert_pem)
        credentials["client-key-data"] = _b64(client_key_pem)
    if token is not None:
        credentials["token"] = token
    if not credentials:
        raise ValueError("a kubeconfig needs a client certificate or a token")
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "e2e",
                "cluster": {"server": server_url, "certificate-authority-data": _b64(ca_pem)},
            }
        ],
        "users": [{"name": user, "user": credentials}],
        "contexts": [{"name": user, "context": {"cluster": "e2e", "user": user}}],
        "current-context": user,
    }
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    path.chmod(0o600)
    return path
