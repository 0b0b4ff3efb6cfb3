"""`explain` finds a kubeconfig where kubectl does: $KUBECONFIG (merged), else ~/.kube/config."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from scheduler.cluster.kube import load_configuration
from scheduler.cluster.kube.kubectl_lookup import kubectl_kubeconfig
from scheduler.framework.errors import ConfigError
from tests.cluster.kube.test_kube_config import kubeconfig


def test_kubeconfig_env_wins_over_the_home_file(tmp_path: Path) -> None:
    home = tmp_path / "home"
    kubeconfig_in_home = home / ".kube" / "config"
    kubeconfig_in_home.parent.mkdir(parents=True)
    kubeconfig_in_home.write_text("{}")
    listed = tmp_path / "listed"
    listed.write_text("{}")
    assert kubectl_kubeconfig({"KUBECONFIG": str(listed)}, home) == (str(listed), "$KUBECONFIG")
    assert kubectl_kubeconfig({}, home) == (str(kubeconfig_in_home), "~/.kube/config")
    # An empty $KUBECONFIG is unset, as for kubectl.
    assert kubectl_kubeconfig({"KUBECONFIG": ""}, home) == (
        str(kubeconfig_in_home),
        "~/.kube/config",
    )


def test_nothing_found_is_none_and_a_list_of_missing_files_is_an_error(tmp_path: Path) -> None:
    assert kubectl_kubeconfig({}, tmp_path) is None
    missing = os.pathsep.join([str(tmp_path / "a"), str(tmp_path / "b")])
    with pytest.raises(ConfigError, match=r"^\$KUBECONFIG: none of the files it lists exists"):
        kubectl_kubeconfig({"KUBECONFIG": missing}, tmp_path)


async def test_several_files_are_merged_the_first_setting_the_current_context(
    tmp_path: Path,
) -> None:
    first = kubeconfig(tmp_path / "first", {"one": "https://10.0.0.1:6443"}, "one")
    second = kubeconfig(tmp_path / "second", {"two": "https://10.0.0.2:6443"}, "two")
    empty = tmp_path / "empty"
    empty.write_text("")
    listed = os.pathsep.join([str(empty), first, str(tmp_path / "not-there"), second])
    found = kubectl_kubeconfig({"KUBECONFIG": listed}, tmp_path)
    assert found == (os.pathsep.join([str(empty), first, second]), "$KUBECONFIG")
    path, _ = found
    current = await load_configuration(kubeconfig=path, master=None, environ={})
    assert current.host == "https://10.0.0.1:6443"
    other = await load_configuration(kubeconfig=path, master=None, context="two", environ={})
    assert other.host == "https://10.0.0.2:6443"
    assert other.api_key["BearerToken"] == "Bearer token-two"
