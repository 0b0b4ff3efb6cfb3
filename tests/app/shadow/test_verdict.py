"""What counts as agreeing with the production scheduler's Binding, and why not."""

from __future__ import annotations

import pytest

from scheduler.app.shadow.evaluate import Evaluation
from scheduler.app.shadow.verdict import Verdict
from scheduler.app.shadow.verdict import compare

CASES = [
    ("only best node", Evaluation(scores={"a": 90, "b": 50}), "a", Verdict.SAME_NODE, ""),
    ("tied for best", Evaluation(scores={"a": 90, "b": 90, "c": 10}), "b", Verdict.TIED_BEST, ""),
    ("scored lower", Evaluation(scores={"a": 90, "b": 50}), "b", Verdict.LOWER_SCORE, ""),
    (
        "filtered out",
        Evaluation(scores={"a": 90}, rejections={"b": ("TaintToleration", "untolerated")}),
        "b",
        Verdict.FILTERED,
        "TaintToleration",
    ),
    (
        "nothing fits",
        Evaluation(rejections={"b": ("NodeResourcesFit", "Insufficient cpu")}, fit_error="0/1"),
        "b",
        Verdict.FILTERED,
        "NodeResourcesFit",
    ),
    ("no node known", Evaluation(fit_error="0/0 nodes"), "b", Verdict.UNSCHEDULABLE, ""),
    ("sampled away", Evaluation(scores={"a": 90}), "b", Verdict.NOT_EVALUATED, ""),
    ("plugin failed", Evaluation(error="boom"), "a", Verdict.ERROR, ""),
]


@pytest.mark.parametrize(
    ("evaluation", "bound", "verdict", "plugin"),
    [case[1:] for case in CASES],
    ids=[case[0] for case in CASES],
)
def test_verdicts(evaluation: Evaluation, bound: str, verdict: Verdict, plugin: str) -> None:
    comparison = compare("ns/p", "default-scheduler", bound, evaluation)

    assert comparison.verdict is verdict
    assert comparison.plugin == plugin
    assert comparison.verdict.agrees is (verdict in (Verdict.SAME_NODE, Verdict.TIED_BEST))


def test_a_lower_score_names_both_scores_and_the_preferred_nodes() -> None:
    comparison = compare("ns/p", "s", "b", Evaluation(scores={"a": 90, "c": 90, "b": 40}))

    assert comparison.candidate_nodes == ("a", "c")
    assert comparison.reason == "b scores 40, a, c score 90"
    assert comparison.as_json()["agrees"] is False
