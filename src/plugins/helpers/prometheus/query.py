"""One PromQL instant query over HTTP, reduced to a value per node."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import aiohttp


class QueryError(Exception):
    """The query could not be answered: transport, HTTP status or a malformed response."""


def node_of(series: Mapping[str, str], node_label: str) -> str | None:
    """The node a series belongs to: its `node_label` value without a `:port` suffix (the
    `instance` label of a scrape target usually carries one)."""
    value = series.get(node_label)
    if not value:
        return None
    host, colon, port = value.rpartition(":")
    if colon and port.isdigit() and host and not host.endswith(":"):
        return host.removeprefix("[").removesuffix("]")
    return value


def per_node_values(payload: Mapping[str, Any], node_label: str) -> dict[str, float]:
    """Finite sample values of an instant-vector response, by node.

    A query should return one series per node; where several land on one node the largest
    value is kept (the busiest GPU, the fullest resource), never an arbitrary one.
    """
    if payload.get("status") != "success":
        raise QueryError(f"Prometheus answered {payload.get('errorType')}: {payload.get('error')}")
    data = payload.get("data") or {}
    if data.get("resultType") != "vector":
        raise QueryError(f"expected an instant vector, got {data.get('resultType')!r}")
    values: dict[str, float] = {}
    for item in data.get("result") or ():
        node = node_of(item.get("metric") or {}, node_label)
        try:
            value = float(item["value"][1])
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            raise QueryError(f"malformed sample {item!r}") from exc
        if node is None or not math.isfinite(value):
            continue
        values[node] = max(value, values.get(node, value))
    return values


async def instant_query(
    session: aiohttp.ClientSession, address: str, promql: str, limit_seconds: float, node_label: str
) -> dict[str, float]:
    """`promql` evaluated now, by node; QueryError on any failure, within `limit_seconds`."""
    url = address.rstrip("/") + "/api/v1/query"
    try:
        async with session.get(
            url, params={"query": promql}, timeout=aiohttp.ClientTimeout(total=limit_seconds)
        ) as response:
            # Prometheus reports bad queries as 400/422 with a JSON body naming the error.
            if response.status not in (200, 400, 422):
                raise QueryError(f"HTTP {response.status} from {url}")
            payload = await response.json(content_type=None)
    except (aiohttp.ClientError, TimeoutError, ValueError) as exc:
        raise QueryError(f"{type(exc).__name__} querying {url}: {exc}") from exc
    if not isinstance(payload, Mapping):
        raise QueryError(f"non-object response from {url}")
    return per_node_values(payload, node_label)
