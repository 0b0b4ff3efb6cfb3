"""Turn per-row Filter statuses into a FilterBatch, for plugins whose batch form runs the
per-node check row by row (the reasons then agree with `filter` by construction)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from scheduler.framework import FilterBatch, Status


def batch_from_statuses(statuses: Sequence[Status]) -> FilterBatch:
    reasons: list[tuple[str, ...]] = []
    reason_index: dict[tuple[str, ...], int] = {}
    codes = np.zeros(len(statuses), dtype=np.int8)
    reason_ids = np.zeros(len(statuses), dtype=np.int32)
    for i, status in enumerate(statuses):
        if status.is_success:
            continue
        codes[i] = status.code
        parts = (status.message(),) if status.error is not None else status.reasons
        index = reason_index.get(parts)
        if index is None:
            index = reason_index[parts] = len(reasons)
            reasons.append(parts)
        reason_ids[i] = index
    return FilterBatch(codes, reasons, reason_ids)


def uniform_batch(status: Status, count: int) -> FilterBatch:
    """Every row gets the same status."""
    if status.is_success:
        return FilterBatch.all_pass(count)
    parts = (status.message(),) if status.error is not None else status.reasons
    return FilterBatch(np.full(count, status.code, dtype=np.int8), (parts,))
