"""The proxy an extender is called through: the one the environment names (HTTP_PROXY,
HTTPS_PROXY, NO_PROXY), as kube-scheduler's extender client picks it with Go's
ProxyFromEnvironment and apimachinery's CIDR entries in NO_PROXY. Looked up once per extender,
not per call: the environment does not change under a running process."""

from __future__ import annotations

import ipaddress
import os
from typing import Any
from urllib.parse import urlsplit

from aiohttp.helpers import get_env_proxy_for_url
from yarl import URL

_NO_PROXY = ("NO_PROXY", "no_proxy")


def env_proxy(url: str) -> dict[str, Any]:
    """The aiohttp request options that send a call to `url` through the environment's proxy
    (none for a loopback host, which Go never proxies, or one NO_PROXY covers)."""
    host = urlsplit(url).hostname or ""
    if host == "localhost" or _is_loopback(host) or _in_no_proxy_networks(host):
        return {}
    try:
        proxy, auth = get_env_proxy_for_url(URL(url))
    except LookupError:
        return {}
    return {"proxy": proxy, "proxy_auth": auth}


def _address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def _is_loopback(host: str) -> bool:
    address = _address(host)
    return address is not None and address.is_loopback


def _in_no_proxy_networks(host: str) -> bool:
    """Whether NO_PROXY holds a CIDR (`10.0.0.0/8`) that the host's address is in: Go reads
    those, Python's proxy_bypass only names and suffixes."""
    address = _address(host)
    if address is None:
        return False
    entries = next((os.environ[k] for k in _NO_PROXY if os.environ.get(k)), "")
    for entry in entries.split(","):
        if "/" not in entry:
            continue
        try:
            if address in ipaddress.ip_network(entry.strip(), strict=False):
                return True
        except ValueError:
            continue
    return False
