"""ImageLocality: favours nodes that already hold the pod's container images."""

from __future__ import annotations

import weakref
from collections.abc import Hashable

import numpy as np
import numpy.typing as npt

from plugins.helpers import NODE_NOT_FOUND_MESSAGE
from plugins.image_locality.images import (
    MAX_CONTAINER_THRESHOLD,
    MIN_THRESHOLD,
    calculate_priority,
    container_count,
    node_image_sizes,
    pod_image_names,
    scaled_image_score,
)
from scheduler.framework import (
    MAX_NODE_SCORE,
    SUCCESS,
    CycleState,
    Handle,
    NodeInfo,
    NodeTable,
    PluginArgs,
    Pod,
    Rows,
    ScoreExtensions,
    Scores,
    Status,
)

Int64Array = npt.NDArray[np.int64]

_MEMO_LIMIT = 1024


class ImageLocality:
    name = "ImageLocality"

    def __init__(self, args: PluginArgs | None, handle: Handle) -> None:
        del args
        self._handle = handle
        # Image name -> (validity key, rows holding it, size on each of those rows), for the
        # table referenced by `_memo_table` only.
        self._holders_memo: dict[str, tuple[Hashable, Int64Array, Int64Array]] = {}
        self._memo_table: weakref.ref[NodeTable] | None = None

    def score(self, state: CycleState, pod: Pod, node_info: NodeInfo) -> tuple[int, Status]:
        node = node_info.node
        if node is None:
            return 0, Status.from_error(NODE_NOT_FOUND_MESSAGE)
        table = self._handle.node_table
        sizes = node_image_sizes(node)
        total = 0
        for image in pod_image_names(pod):
            size = sizes.get(image)
            if size is not None:
                holders = len(table.image_nodes.get(image, ()))
                total += scaled_image_score(size, holders, table.size)
        return calculate_priority(total, container_count(pod)), SUCCESS

    def score_nodes(self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows) -> Scores:
        images = [image for image in pod_image_names(pod) if image in table.image_nodes]
        if not images:
            # No node has any of the pod's images: every sum is below the threshold, score 0.
            return np.zeros(len(rows), dtype=np.int64)
        sums = np.zeros(table.size, dtype=np.int64)
        for image in images:
            holder_rows, sizes = self._holders(table, image)
            if len(holder_rows):
                spread = len(holder_rows) / table.size
                # float64 product truncated toward zero, exactly as scaled_image_score does.
                sums[holder_rows] += (sizes.astype(np.float64) * spread).astype(np.int64)
        containers = container_count(pod)
        max_threshold = MAX_CONTAINER_THRESHOLD * containers
        span = max_threshold - MIN_THRESHOLD
        if span <= 0:
            return np.zeros(len(rows), dtype=np.int64)
        clamped = np.clip(table.gather(sums, rows), MIN_THRESHOLD, max_threshold)
        scores: Scores = (MAX_NODE_SCORE * (clamped - MIN_THRESHOLD)) // span
        return scores

    def score_extensions(self) -> ScoreExtensions | None:
        return None

    def _holders(self, table: NodeTable, image: str) -> tuple[Int64Array, Int64Array]:
        """Rows whose node holds `image` and its size there, memoized until nodes change.

        Every node event rewrites its row through `upsert_node`, which bumps the table's
        label version, so (label version, size, holder count) identifies the answer.
        """
        names = table.image_nodes.get(image)
        if not names:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        if self._memo_table is None or self._memo_table() is not table:
            self._holders_memo.clear()
            self._memo_table = weakref.ref(table)
        key = (table.label_version, table.size, len(names))
        cached = self._holders_memo.get(image)
        if cached is not None and cached[0] == key:
            return cached[1], cached[2]
        rows: list[int] = []
        sizes: list[int] = []
        for name in names:
            row = table.row_of(name)
            node = table.node_infos[row].node if row is not None else None
            size = node_image_sizes(node).get(image) if node is not None else None
            if row is not None and size is not None:
                rows.append(row)
                sizes.append(size)
        result = (np.asarray(rows, dtype=np.int64), np.asarray(sizes, dtype=np.int64))
        if len(self._holders_memo) >= _MEMO_LIMIT:
            self._holders_memo.clear()
        self._holders_memo[image] = (key, *result)
        return result
