"""The scheduler's log lines, as kube-scheduler's operators read them at each -v level."""

from __future__ import annotations

import io
import json
import re
from typing import Any

import pytest

from scheduler.observability import configure_logging
from scheduler.testing import make_node
from scheduler.testing import make_pod
from tests.integration.harness import Harness

FIT_ERROR = (
    "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, "
    "preemption: 0/1 nodes are available: "
    "1 No preemption victims found for incoming pod."
)


async def _run(format: str, verbosity: int) -> str:
    stream = io.StringIO()
    configure_logging(
        "json" if format == "json" else "text", verbosity, stream, cache_loggers=False
    )
    async with Harness() as h:
        h.create([make_node("n1").capacity(cpu="1", memory="1Gi", pods="10").dict()])
        h.create([make_pod("fits").req(cpu="500m").dict(), make_pod("big").req(cpu="900m").dict()])
        await h.schedule_active()
    return stream.getvalue()


def _json(text: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in text.splitlines()]


async def test_at_v2_an_unschedulable_pod_logs_one_klog_text_line() -> None:
    lines = (await _run("text", 2)).splitlines()
    unschedulable = [line for line in lines if "Unable to schedule pod" in line]
    assert len(unschedulable) == 1
    assert re.match(r"^I\d{4} [\d:.]+ +\d+ failure\.py:\d+\] ", unschedulable[0])
    assert unschedulable[0].endswith(
        f'] "Unable to schedule pod; no fit; waiting" v=2 pod="default/big" err="{FIT_ERROR}"'
    )
    assert any('"Successfully bound pod to node"' in line for line in lines)
    assert not any("Attempting to schedule pod" in line for line in lines)


async def test_at_v2_an_unschedulable_pod_logs_one_klog_json_record() -> None:
    records = _json(await _run("json", 2))
    [record] = [r for r in records if r["msg"].startswith("Unable to schedule pod")]
    assert {k: record[k] for k in ("msg", "v", "pod", "err")} == {
        "msg": "Unable to schedule pod; no fit; waiting",
        "v": 2,
        "pod": "default/big",
        "err": FIT_ERROR,
    }
    assert record["caller"].startswith("failure.py:")
    assert isinstance(record["ts"], float)
    bound = [r for r in records if r["msg"] == "Successfully bound pod to node"]
    assert [(r["pod"], r["node"]) for r in bound] == [("default/fits", "n1")]


@pytest.mark.parametrize(("verbosity", "attempts", "per_plugin"), [(0, 0, 0), (4, 2, 0), (5, 2, 1)])
async def test_attempts_from_v4_and_plugin_detail_from_v5(
    verbosity: int, attempts: int, per_plugin: int
) -> None:
    records = _json(await _run("json", verbosity))
    assert sum(r["msg"] == "Attempting to schedule pod" for r in records) == attempts
    plugin_lines = [r for r in records if r["msg"] == "Plugin rejected nodes"]
    assert len(plugin_lines) == per_plugin
    if per_plugin:
        assert (plugin_lines[0]["plugin"], plugin_lines[0]["nodes"]) == ("NodeResourcesFit", 1)
    if verbosity == 0:
        assert not any(r["msg"].startswith("Unable to schedule") for r in records)
