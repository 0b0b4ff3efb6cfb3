"""Why nodes were rejected in a cycle, and upstream's FitError text built from it."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from scheduler.framework.node_table import NodeTable
from scheduler.framework.status import Code
from scheduler.framework.status import Status

NO_NODES_AVAILABLE = "no nodes available to schedule pods"


class Diagnosis:
    """Per-row rejection codes and reasons for one scheduling attempt.

    Rejections are interned as (plugin, reasons) so recording a vectorized rejection of many
    rows is one array assignment. Rows outside a PreFilter result share the `absent` status.
    """

    def __init__(self, table: NodeTable) -> None:
        self._table = table
        self._names = table.names
        self.num_all_nodes = table.size
        self.codes: npt.NDArray[np.int8] = np.zeros(table.size, dtype=np.int8)
        self.reason_ids: npt.NDArray[np.int32] = np.zeros(table.size, dtype=np.int32)
        self.rejections: list[tuple[str, tuple[str, ...]]] = []
        self._rejection_ids: dict[tuple[str, tuple[str, ...]], int] = {}
        self.unschedulable_plugins: set[str] = set()
        self.pending_plugins: set[str] = set()
        self.pre_filter_message = ""
        self.post_filter_message = ""
        self.absent: Status | None = None
        self.absent_count = 0
        self._absent_mask: npt.NDArray[np.bool_] | None = None

    def _intern(self, plugin: str, reasons: tuple[str, ...]) -> int:
        key = (plugin, reasons)
        found = self._rejection_ids.get(key)
        if found is None:
            found = len(self.rejections)
            self.rejections.append(key)
            self._rejection_ids[key] = found
        return found

    def note_plugin(self, plugin: str, code: Code) -> None:
        """Count `plugin` among the pod's rejectors (their events requeue it); a status that
        names no plugin (nodes outside a PreFilter result) adds nothing, as upstream's
        AddPluginStatus."""
        if not plugin:
            return
        if code is Code.PENDING:
            self.pending_plugins.add(plugin)
        elif code in (Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE):
            self.unschedulable_plugins.add(plugin)

    def reject_rows(
        self,
        rows: npt.NDArray[np.int64],
        codes: npt.NDArray[np.int8],
        plugin: str,
        reasons: Sequence[tuple[str, ...]],
        reason_ids: npt.NDArray[np.int32] | None,
    ) -> None:
        """Record rejections of `rows` (codes non-zero) by `plugin`."""
        if not len(rows):
            return
        self.codes[rows] = codes
        mapping = np.array([self._intern(plugin, r) for r in reasons], dtype=np.int32)
        if reason_ids is None:
            self.reason_ids[rows] = mapping[0]
        else:
            self.reason_ids[rows] = mapping[reason_ids]
        for code in np.unique(codes):
            self.note_plugin(plugin, Code(int(code)))

    def reject_row(self, row: int, status: Status) -> None:
        self.codes[row] = int(status.code)
        self.reason_ids[row] = self._intern(status.plugin, status.all_reasons())
        self.note_plugin(status.plugin, status.code)

    def status_of_row(self, row: int) -> Status:
        code = Code(int(self.codes[row]))
        if code is Code.SUCCESS:
            if self.absent is not None and self._outside_prefilter(row):
                return self.absent
            return Status()
        plugin, reasons = self.rejections[int(self.reason_ids[row])]
        return Status(code, *reasons, plugin=plugin)

    def _outside_prefilter(self, row: int) -> bool:
        return bool(self._absent_mask is not None and self._absent_mask[row])

    def mark_absent(self, allowed_rows: npt.NDArray[np.int64], status: Status) -> None:
        mask = np.ones(self.num_all_nodes, dtype=np.bool_)
        mask[allowed_rows] = False
        self._absent_mask = mask
        self.absent = status
        self.absent_count = int(mask.sum())
        self.note_plugin(status.plugin, status.code)

    # -- PostFilter's view (NodeStatusReader) ----------------------------------------------

    def status_of(self, node_name: str) -> Status:
        """The node's status as upstream's NodeToStatus gives it. A node with no rejection
        recorded (it passed the Filters but an HTTP extender dropped it without naming it, or
        the search stopped before it) is absent from upstream's map, and absent nodes read as
        the absent status: UnschedulableAndUnresolvable, with the PreFilter's message when its
        result left nodes out."""
        row = self._table.row_of(node_name)
        if row is not None and row < self.num_all_nodes:
            status = self.status_of_row(row)
            if not status.is_success:
                return status
        return (
            self.absent if self.absent is not None else Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
        )

    def nodes_with_code(self, code: int) -> list[str]:
        rows = np.flatnonzero(self.codes == code)
        names = [self._names[int(r)] for r in rows]
        if (
            self.absent is not None
            and int(self.absent.code) == code
            and self._absent_mask is not None
        ):
            names.extend(self._names[int(r)] for r in np.flatnonzero(self._absent_mask))
        return names

    def rejections_by_plugin(self) -> list[tuple[str, tuple[str, ...], int]]:
        """(plugin, reasons, number of nodes) for every distinct rejection, for -v=5 logs."""
        found: list[tuple[str, tuple[str, ...], int]] = []
        rejected = self.codes != 0
        if rejected.any():
            ids, per_id = np.unique(self.reason_ids[rejected], return_counts=True)
            for rejection_id, count in zip(ids.tolist(), per_id.tolist(), strict=True):
                plugin, reasons = self.rejections[rejection_id]
                found.append((plugin, reasons, count))
        if self.absent is not None and self.absent_count:
            found.append((self.absent.plugin, self.absent.all_reasons(), self.absent_count))
        return found

    # -- the FailedScheduling text ---------------------------------------------------------

    def histogram(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for _plugin, reasons, nodes in self.rejections_by_plugin():
            for reason in reasons:
                counts[reason] = counts.get(reason, 0) + nodes
        return counts

    def fit_error_message(self) -> str:
        """`0/N nodes are available: ...` exactly as upstream's FitError formats it."""
        prefix = f"0/{self.num_all_nodes} nodes are available:"
        if self.pre_filter_message:
            text = f"{prefix} {self.pre_filter_message}."
        else:
            text = _with_histogram(prefix, self.histogram())
        if self.post_filter_message:
            text = f"{text} {self.post_filter_message}"
        return text


def single_node_fit_error(status: Status) -> str:
    """Message for rejections after a node was chosen (Reserve, Permit, PreBind, Bind)."""
    return fit_error_text(1, Counter(status.all_reasons()))


def fit_error_text(num_all_nodes: int, counts: Mapping[str, int]) -> str:
    """Upstream's FitError text over reasons counted by node: `0/N nodes are available:` and
    the histogram."""
    return _with_histogram(f"0/{num_all_nodes} nodes are available:", counts)


def _with_histogram(prefix: str, counts: Mapping[str, int]) -> str:
    """`prefix` and the "<count> <reason>" entries sorted as strings; nothing is added when no
    rejection gave a reason (upstream then ends the text at the colon)."""
    entries = sorted(f"{count} {reason}" for reason, count in counts.items())
    return f"{prefix} {', '.join(entries)}." if entries else prefix
