"""What kube-scheduler's own log says about one placement: how many nodes were feasible and
each node's final score (logged by schedule_one.go at -v=10, enabled for that file alone).

The chosen node is compared only where upstream's top score is unique: where several nodes
tie, kube-scheduler picks one of them at random and so may we.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

_BOUND = re.compile(
    r'"Successfully bound pod to node" pod="(?P<pod>[^"]+)" node="[^"]+" '
    r"evaluatedNodes=\d+ feasibleNodes=(?P<feasible>\d+)"
)
_SCORE = re.compile(
    r'"Calculated node\'s final score for pod" pod="(?P<pod>[^"]+)" '
    r'node="(?P<node>[^"]+)" score=(?P<score>-?\d+)'
)
# kube-scheduler logs the binding right after the API call returns; bounded wait for the line.
LOG_TIMEOUT_S = 5.0
POLL_S = 0.05


def upstream_top_is_unique(log_path: Path, pod_key: str) -> bool:
    """True if the placement of `pod_key` (namespace/name) had one node with the top score."""
    deadline = time.monotonic() + LOG_TIMEOUT_S
    while True:
        text = log_path.read_text(errors="replace")
        feasible = [int(m["feasible"]) for m in _BOUND.finditer(text) if m["pod"] == pod_key]
        if feasible:
            break
        if time.monotonic() >= deadline:
            raise AssertionError(f"kube-scheduler's log has no binding line for {pod_key}")
        time.sleep(POLL_S)
    if feasible[-1] <= 1:
        return True
    scores: dict[str, int] = {}
    for match in _SCORE.finditer(text):
        if match["pod"] == pod_key:
            scores[match["node"]] = int(match["score"])
    if not scores:
        raise AssertionError(f"kube-scheduler's log has no scores for {pod_key}")
    top = max(scores.values())
    return sum(1 for score in scores.values() if score == top) == 1
