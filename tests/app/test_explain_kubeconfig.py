"""Against a live cluster, `explain` finds its kubeconfig as kubectl does, and says where it
looked when there is none."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from scheduler.app.cli import main


@pytest.fixture
def workstation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A home directory with no kubeconfig, outside any pod."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    return home


def test_with_no_kubeconfig_anywhere_every_place_looked_at_is_named(
    workstation: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["explain", "default/web"]) == 2
    err = capsys.readouterr().err
    assert "no cluster to connect to" in err
    assert "set $KUBECONFIG, create ~/.kube/config" in err


def _contextless(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "Config", "clusters": []}))
    return path


def test_the_home_kubeconfig_is_read(workstation: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _contextless(workstation / ".kube" / "config")
    assert main(["explain", "default/web"]) == 2
    assert "~/.kube/config: " in capsys.readouterr().err


def test_kubeconfig_env_is_read_before_the_home_file_and_context_chooses_in_it(
    workstation: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _contextless(workstation / ".kube" / "config")
    listed = _contextless(workstation / "elsewhere" / "config")
    monkeypatch.setenv("KUBECONFIG", str(listed))
    assert main(["explain", "default/web"]) == 2
    err = capsys.readouterr().err
    assert f"$KUBECONFIG: {listed}: sets no current-context" in err
    assert main(["explain", "default/web", "--context", "prod"]) == 2
    assert 'context "prod" is not in the file\'s contexts' in capsys.readouterr().err


def test_context_goes_with_a_live_cluster_only(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["explain", "web", "--scenario", "x.yaml", "--context", "prod"]) == 2
    assert "--scenario and --context: give one or the other" in capsys.readouterr().err
