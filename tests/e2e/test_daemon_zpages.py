"""`/statusz` and `/flagz` beside kube-scheduler's: the same forms, fields and defaults.

Both schedulers run against the same apiserver. Their command lines differ, so `/flagz` is
compared on the flags neither command line gives: those show each scheduler's defaults, which
must read the same.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.e2e.binaries import ControlPlaneBinaries
from tests.e2e.controlplane import ControlPlane
from tests.e2e.daemon import DaemonLauncher
from tests.e2e.secure_port_client import SecurePortAnswer
from tests.e2e.secure_port_client import secure_port_request
from tests.e2e.upstream_scheduler import STARTUP_S
from tests.e2e.upstream_scheduler import start_kube_scheduler
from tests.e2e.workload import unique

pytestmark = pytest.mark.e2e

STATUSZ_JSON = "application/json;as=Statusz;v=v1beta1;g=config.k8s.io"
FLAGZ_JSON = "application/json;as=Flagz;v=v1beta1;g=config.k8s.io"
# A text line "Name: value", "Name= value" or "Name  value": the separator varies on purpose.
TEXT_FIELD = re.compile(r"^(?P<name>[A-Z][a-z]+(?: [a-z]+)?)(?::|=| ) +\S")
# Where the two differ by nature: the language of the runtime.
RUNTIME_FIELDS = {"Go version", "Python version"}


def _given(argv: list[str]) -> set[str]:
    """The flag names a command line sets."""
    return {arg.lstrip("-").partition("=")[0] for arg in argv if arg.startswith("-")}


def _text_fields(answer: SecurePortAnswer) -> list[str]:
    lines = answer.body.splitlines()
    assert lines[0] == ""
    assert lines[2].startswith("Warning: This endpoint is not meant to be machine parseable")
    return [m["name"] for m in map(TEXT_FIELD.match, lines[4:]) if m] if len(lines) > 4 else []


def test_statusz_and_flagz_answer_as_kube_schedulers(
    e2e_binaries: ControlPlaneBinaries,
    control_plane: ControlPlane,
    daemons: DaemonLauncher,
    tmp_path: Path,
) -> None:
    ours = daemons.start(unique("sched"))
    upstream, upstream_port = start_kube_scheduler(
        e2e_binaries, control_plane, control_plane.kubeconfig_path, tmp_path / "ks.log"
    )
    cert = control_plane.admin_cert_paths

    def ask(path: str, accept: str | None = None) -> tuple[SecurePortAnswer, SecurePortAnswer]:
        headers = {"Accept": accept} if accept else {}
        mine, theirs = (
            secure_port_request(port, path, client_cert=cert, headers=headers)
            for port in (ours.port, upstream_port)
        )
        return mine, theirs

    try:
        upstream.wait_until(
            lambda: ask("/statusz")[1].status == 200, STARTUP_S, "kube-scheduler's /statusz"
        )
        statusz_text = ask("/statusz")
        statusz_json = ask("/statusz", STATUSZ_JSON)
        flagz_text = ask("/flagz", "*/*")
        flagz_json = ask("/flagz", FLAGZ_JSON)
        refused = [ask(path, "application/json") for path in ("/statusz", "/flagz")]
        wrong_kind = ask("/flagz", f"{STATUSZ_JSON}, text/plain;q=0.5")
    finally:
        upstream.stop()

    for mine, theirs in (statusz_text, flagz_text, wrong_kind):
        assert (mine.status, theirs.status) == (200, 200)
        assert mine.headers["Content-Type"] == theirs.headers["Content-Type"]
    mine, theirs = statusz_text
    assert mine.body.splitlines()[1] == "kube-pyscheduler statusz"
    assert set(_text_fields(mine)) - RUNTIME_FIELDS == set(_text_fields(theirs)) - RUNTIME_FIELDS

    mine_status, theirs_status = (json.loads(answer.body) for answer in statusz_json)
    assert statusz_json[0].headers["Content-Type"] == statusz_json[1].headers["Content-Type"]
    assert set(mine_status) == set(theirs_status) - {"goVersion"}
    for field in ("kind", "apiVersion", "emulationVersion", "paths"):
        assert mine_status[field] == theirs_status[field], field
    assert mine_status["metadata"] == {"name": "kube-pyscheduler"}

    mine_flags, theirs_flags = (json.loads(answer.body)["flags"] for answer in flagz_json)
    assert set(theirs_flags) <= set(mine_flags)
    untouched = set(theirs_flags) - _given(ours.argv) - _given(list(upstream.argv))
    assert len(untouched) > 40
    assert {name: mine_flags[name] for name in untouched} == {
        name: theirs_flags[name] for name in untouched
    }
    assert flagz_text[0].body.splitlines()[1] == "kube-pyscheduler flagz"

    for mine, theirs in refused:
        assert (mine.status, theirs.status) == (406, 406)
        assert json.loads(mine.body) == json.loads(theirs.body)
    # Statusz's JSON is no form of /flagz: the text form is the next choice, for both.
    assert wrong_kind[0].body.splitlines()[1] == "kube-pyscheduler flagz"
