"""ImageLocality: favours nodes that already hold the pod's container images."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from plugins.helpers import score_on_node
from plugins.helpers.signatures import IMAGES
from plugins.helpers.table_memo import TableMemo
from plugins.image_locality.images import MAX_CONTAINER_THRESHOLD
from plugins.image_locality.images import MIN_THRESHOLD
from plugins.image_locality.images import calculate_priority
from plugins.image_locality.images import container_count
from plugins.image_locality.images import pod_image_names
from plugins.image_locality.images import scaled_image_score
from scheduler.framework import MAX_NODE_SCORE
from scheduler.framework import SUCCESS
from scheduler.framework import CycleState
from scheduler.framework import Handle
from scheduler.framework import Node
from scheduler.framework import NodeTable
from scheduler.framework import PluginArgs
from scheduler.framework import Pod
from scheduler.framework import Rows
from scheduler.framework import ScoreExtensions
from scheduler.framework import Scores
from scheduler.framework import SignFragments
from scheduler.framework import Status

Int64Array = npt.NDArray[np.int64]

_MEMO_LIMIT = 1024


class ImageLocality:
    """Scores each image the pod pulls and the node holds by the one size the cluster keeps for
    that name, damped by the share of nodes holding it (upstream's cluster-wide image state)."""

    name = "ImageLocality"

    def __init__(self, args: PluginArgs | None, handle: Handle) -> None:
        del args
        self._handle = handle
        # Image name -> rows holding it.
        self._holders_memo: TableMemo[Int64Array] = TableMemo(limit=_MEMO_LIMIT)

    @score_on_node
    def score(self, state: CycleState, pod: Pod, node: Node) -> tuple[int, Status]:
        table = self._handle.node_table
        total = 0
        for image in pod_image_names(pod):
            holders = table.image_nodes.get(image, ())
            if node.name in holders:
                total += scaled_image_score(table.image_sizes[image], len(holders), table.size)
        return calculate_priority(total, container_count(pod)), SUCCESS

    def score_nodes(self, state: CycleState, pod: Pod, table: NodeTable, rows: Rows) -> Scores:
        images = [image for image in pod_image_names(pod) if image in table.image_nodes]
        if not images:
            # No node has any of the pod's images: every sum is below the threshold, score 0.
            return np.zeros(len(rows), dtype=np.int64)
        sums = np.zeros(table.size, dtype=np.int64)
        for image in images:
            holder_rows = self._holder_rows(table, image)
            if len(holder_rows):
                sums[holder_rows] += scaled_image_score(
                    table.image_sizes[image], len(table.image_nodes[image]), table.size
                )
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

    def sign_pod(self, pod: Pod) -> SignFragments | None:
        # Score adds a term per image entry (an image two containers use counts twice) and caps
        # the sum by the number of containers; upstream signs only the set of names, which
        # leaves both out (and image volumes).
        return {IMAGES: (container_count(pod), tuple(sorted(pod_image_names(pod))))}

    def _holder_rows(self, table: NodeTable, image: str) -> Int64Array:
        """Rows whose node holds `image`, memoized until rows move or the image state changes."""

        def holder_rows() -> Int64Array:
            found = (table.row_of(name) for name in table.image_nodes.get(image, ()))
            return np.asarray(sorted(row for row in found if row is not None), dtype=np.int64)

        validity = (table.label_version, table.image_version, table.size)
        return self._holders_memo.get(table, image, validity, holder_rows)
