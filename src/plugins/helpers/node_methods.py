"""Filter and Score methods written against the node itself rather than its NodeInfo.

A NodeInfo can exist without its Node: the cache learns of pods bound to a node before (or
after) it sees the Node object. Upstream's plugins answer such a node with an Error "node not
found"; these decorators give that answer, so the method's body starts with its own logic and
receives the Node. The decorated method keeps the signature the scheduler calls.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TypeVar

import numpy as np

from scheduler.framework import CycleState
from scheduler.framework import Node
from scheduler.framework import NodeInfo
from scheduler.framework import NodeTable
from scheduler.framework import Pod
from scheduler.framework import Rows
from scheduler.framework import Scores
from scheduler.framework import Status

NODE_NOT_FOUND_MESSAGE = "node not found"

P = TypeVar("P")


def filter_on_node(
    method: Callable[[P, CycleState, Pod, Node], Status],
) -> Callable[[P, CycleState, Pod, NodeInfo], Status]:
    """`filter(state, pod, node_info)` from `method(state, pod, node)`."""

    @functools.wraps(method)
    def filter(plugin: P, state: CycleState, pod: Pod, node_info: NodeInfo) -> Status:
        node = node_info.node
        if node is None:
            return Status.from_error(NODE_NOT_FOUND_MESSAGE)
        return method(plugin, state, pod, node)

    return filter


def score_on_node(
    method: Callable[[P, CycleState, Pod, Node], tuple[int, Status]],
) -> Callable[[P, CycleState, Pod, NodeInfo], tuple[int, Status]]:
    """`score(state, pod, node_info)` from `method(state, pod, node)`; 0 with the Error."""

    @functools.wraps(method)
    def score(plugin: P, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        node = node_info.node
        if node is None:
            return 0, Status.from_error(NODE_NOT_FOUND_MESSAGE)
        return method(plugin, state, pod, node)

    return score


def scored_node_by_node(
    score: Callable[[CycleState, Pod, NodeInfo], tuple[int, Status]],
    state: CycleState,
    pod: Pod,
    table: NodeTable,
    rows: Rows,
) -> Scores:
    """A batch Score form's fallback to the per-node `score` for each of `rows`, for when
    what the batch form keeps per row does not apply to this pod."""
    infos = table.node_infos
    return np.array([score(state, pod, infos[row])[0] for row in rows.tolist()], dtype=np.int64)
