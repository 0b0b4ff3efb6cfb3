"""What `simulate` reports beyond placements: the seed that repeats a run, the pods preemption
took away, the final cluster as YAML, and progress on a terminal."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduler.app.cli import main
from scheduler.app.progress import BindingProgress
from scheduler.config.documents import load_yaml_documents
from scheduler.testing import make_node
from scheduler.testing import make_pod


def _write(tmp_path: Path, objects: list[dict[str, Any]]) -> Path:
    scenario = tmp_path / "scenario.yaml"
    scenario.write_text(yaml.safe_dump_all(objects))
    return scenario


def _spread_scenario() -> list[dict[str, Any]]:
    """Six equal nodes and a Deployment: placements and pod names depend on the seed."""
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 4,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "web"}]},
            },
        },
    }
    nodes = [make_node(f"n{i}").capacity(cpu="4", memory="8Gi", pods=110).dict() for i in range(6)]
    return [*nodes, deployment]


def _placements(capsys: pytest.CaptureFixture[str], argv: list[str]) -> dict[str, str]:
    assert main([*argv, "--output", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    return {p["name"]: p["node"] for p in report["pods"]}


def test_a_run_prints_its_seed_and_that_seed_repeats_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["simulate", str(_write(tmp_path, _spread_scenario())), "--no-progress"]
    assert main(argv) == 0
    printed = re.search(r"Seed: (\d+) \(repeat with --seed \1\)", capsys.readouterr().out)
    assert printed is not None
    seed = int(printed[1])
    first = _placements(capsys, [*argv, "--seed", str(seed)])
    assert _placements(capsys, [*argv, "--seed", str(seed)]) == first
    others = {
        tuple(sorted(_placements(capsys, [*argv, "--seed", str(s)]).items())) for s in range(5)
    }
    assert len(others) > 1, "different seeds choose differently"


def test_help_documents_the_seed(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["simulate", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "--seed N" in text
    assert "prints the seed used so the run can be repeated exactly with --seed N" in text


def test_victims_of_preemption_and_rejecting_plugins_are_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    objects = [
        make_node("only").capacity(cpu="1", memory="8Gi", pods=110).dict(),
        make_pod("low").req(cpu="1").node("only").dict(),
        make_pod("high").req(cpu="1").priority(100).dict(),
        make_pod("huge").req(cpu="8").priority(100).dict(),
    ]
    argv = ["simulate", str(_write(tmp_path, objects)), "--no-progress", "--seed", "1"]
    assert main([*argv, "--output", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    pods = {p["name"]: p for p in report["pods"]}
    assert report["summary"]["pods"] == 3 and report["summary"]["preempted"] == 1
    assert pods["huge"]["rejectedBy"] == ["NodeResourcesFit"]
    assert pods["high"]["status"] == "Scheduled" and pods["high"]["node"] == "only"
    assert pods["low"]["status"] == "Preempted"
    assert pods["low"]["node"] == "only"
    assert pods["low"]["message"] == "preempted on node only to make room for default/high"
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "Preempted (victims)" in text and "Preempted:" in text and "default/low" in text


def test_yaml_output_is_the_final_cluster(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["simulate", str(_write(tmp_path, _spread_scenario())), "--no-progress", "--seed", "2"]
    assert main([*argv, "--output", "yaml"]) == 0
    documents = [d for d in yaml.safe_load_all(capsys.readouterr().out) if d]
    kinds = sorted({d["kind"] for d in documents})
    assert kinds == ["Deployment", "Namespace", "Node", "Pod", "ReplicaSet"]
    pods = [d for d in documents if d["kind"] == "Pod"]
    assert len(pods) == 4 and all(p["spec"]["nodeName"] for p in pods)
    assert all(d["metadata"]["resourceVersion"] for d in documents)


def test_yaml_output_quotes_what_kubectl_would_read_as_another_type(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # kubectl's YAML reader takes a bare y for true and 1e3 for a number.
    node = make_node("n1").label("spot", "y").label("rack", "1e3").dict()
    scenario = tmp_path / "scenario.json"
    scenario.write_text(json.dumps(node))
    argv = ["simulate", str(scenario), "--no-progress", "--output", "yaml"]
    assert main(argv) == 0
    documents = load_yaml_documents(capsys.readouterr().out, "output")
    [written] = [d for d in documents if d and d["kind"] == "Node"]
    labels = written["metadata"]["labels"]
    assert (labels["spot"], labels["rack"]) == ("y", "1e3")


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["--output", "html"], "argument --output: html: a FILE to write the page to is required"),
        (["--output", "pdf"], "argument --output: invalid format 'pdf' (choose from table, json"),
    ],
)
def test_bad_output_choices_are_refused(
    argv: list[str], expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["simulate", *argv])
    assert exit_.value.code == 2
    assert expected in capsys.readouterr().err


def test_html_output_to_an_unwritable_place_names_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "missing-dir" / "r.html"
    assert main(["simulate", "--no-progress", "--output", "html", str(target)]) == 2
    assert f"--output html {target}: cannot write" in capsys.readouterr().err


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_shows_bound_pods_rate_and_time_left_on_a_terminal() -> None:
    terminal = _Terminal()
    progress = BindingProgress(terminal)
    for done in (0, 5, 10):
        progress(done, 10)
    progress.finish()
    text = terminal.getvalue()
    assert "10/10" in text and "pods/s" in text and "left" in text


def test_progress_is_silent_off_a_terminal() -> None:
    stream = io.StringIO()
    progress = BindingProgress(stream)
    progress(3, 10)
    progress.finish()
    assert stream.getvalue() == ""


def test_table_text_is_printed_as_written(capsys: pytest.CaptureFixture[str]) -> None:
    """Brackets in a reason are text, not terminal markup."""
    assert main(["simulate", "--no-progress", "--seed", "1"]) == 0
    assert "waiting for scheduling gates: [example.com/quota]" in capsys.readouterr().out
