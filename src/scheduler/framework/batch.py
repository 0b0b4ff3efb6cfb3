"""Results of the batch (vectorized) Filter form."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from scheduler.framework.status import Code
from scheduler.framework.status import Status

# Read-only all-zero codes by row count, shared by every batch that passes all its rows: most
# Filter plugins pass every node of most pods, and each made its own zeros before.
_PASSING_CODES: dict[int, npt.NDArray[np.int8]] = {}
_PASSING_SIZES = 8


def _passing_codes(count: int) -> npt.NDArray[np.int8]:
    codes = _PASSING_CODES.get(count)
    if codes is None:
        if len(_PASSING_CODES) >= _PASSING_SIZES:
            _PASSING_CODES.clear()
        codes = np.zeros(count, dtype=np.int8)
        codes.flags.writeable = False
        _PASSING_CODES[count] = codes
    return codes


@dataclass(slots=True)
class FilterBatch:
    """Outcome of filtering a set of rows, aligned with the `rows` the plugin was given.

    `codes[i]` is a `Code` value (0 = passes). For a rejected row, its reasons are
    `reasons[reason_ids[i]]`; `reason_ids` may be None when every rejected row shares
    `reasons[0]`.
    """

    codes: npt.NDArray[np.int8]
    reasons: Sequence[tuple[str, ...]]
    reason_ids: npt.NDArray[np.int32] | None = None
    # True when the batch was made knowing that every row passes: the executor then skips
    # looking at the codes, which are read-only so that the flag stays true.
    passed_all: bool = False

    @classmethod
    def all_pass(cls, count: int) -> FilterBatch:
        return cls(_passing_codes(count), (), passed_all=True)

    @classmethod
    def reject_where(
        cls, rejected: npt.NDArray[np.bool_], code: Code, *reasons: str
    ) -> FilterBatch:
        """Rows where `rejected` is True fail with one shared status."""
        if not rejected.any():
            return cls.all_pass(len(rejected))
        codes = np.where(rejected, np.int8(code), np.int8(0)).astype(np.int8, copy=False)
        return cls(codes, (tuple(reasons),))

    @classmethod
    def uniform(cls, status: Status, count: int) -> FilterBatch:
        """Every row gets the same status (a verdict about the pod, not about any node)."""
        if status.is_success:
            return cls.all_pass(count)
        return cls(np.full(count, status.code, dtype=np.int8), (_reasons_of(status),))

    @classmethod
    def from_statuses(cls, statuses: Sequence[Status]) -> FilterBatch:
        """One row per per-node status, for batch forms that run the per-node check row by row
        (their reasons then agree with `filter` by construction)."""
        reasons: list[tuple[str, ...]] = []
        reason_index: dict[tuple[str, ...], int] = {}
        codes = np.zeros(len(statuses), dtype=np.int8)
        reason_ids = np.zeros(len(statuses), dtype=np.int32)
        for i, status in enumerate(statuses):
            if status.is_success:
                continue
            codes[i] = status.code
            parts = _reasons_of(status)
            index = reason_index.get(parts)
            if index is None:
                index = reason_index[parts] = len(reasons)
                reasons.append(parts)
            reason_ids[i] = index
        return cls(codes, reasons, reason_ids)

    @property
    def passed(self) -> npt.NDArray[np.bool_]:
        passed: npt.NDArray[np.bool_] = np.equal(self.codes, 0)
        return passed

    def reasons_at(self, index: int) -> tuple[str, ...]:
        if self.reason_ids is None:
            return self.reasons[0]
        return self.reasons[int(self.reason_ids[index])]


def _reasons_of(status: Status) -> tuple[str, ...]:
    return (status.message(),) if status.error is not None else status.reasons
