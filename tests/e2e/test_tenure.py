"""Lease tenures and the Bindings they cover, from hand-made audit records (no cluster)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.e2e.audit import AuditLog
from tests.e2e.audit import AuditRecord
from tests.e2e.tenure import lease_timeline

NS, LEASE = "ns", "lease"
_version = iter(range(1, 10_000))


def _lease_write(user: str, holder: str, at: float, *, code: int = 200) -> AuditRecord:
    response: dict[str, Any] = {
        "kind": "Lease" if code < 300 else "Status",
        "metadata": {"resourceVersion": str(next(_version))},
        "spec": {"holderIdentity": holder, "leaseDurationSeconds": 15},
    }
    return AuditRecord(user, "update", "leases", "", NS, LEASE, code, at, at + 0.01, response)


def _binding(user: str, pod: str, at: float, *, code: int = 201) -> AuditRecord:
    return AuditRecord(user, "create", "pods", "binding", NS, pod, code, at, at + 0.01, None)


def test_a_tenure_runs_from_the_acquiring_write_to_the_last_renewal_plus_the_lease() -> None:
    writes = [_lease_write("a", "A", 100.0), _lease_write("a", "A", 102.0)]
    timeline = lease_timeline(writes, NS, LEASE)

    [tenure] = timeline.tenures
    assert (tenure.user, tenure.start, tenure.end) == ("a", 100.01, 117.0)
    inside, before, late = (
        _binding("a", "p1", 110.0),
        _binding("a", "p2", 99.0),
        _binding("a", "p3", 117.0),
    )
    assert timeline.outside([inside, before, late]) == [before, late]
    assert timeline.received_outside([inside, before, late]) == [before]


def test_a_binding_by_another_user_is_outside() -> None:
    timeline = lease_timeline([_lease_write("a", "A", 100.0)], NS, LEASE)

    stranger = _binding("b", "p1", 105.0)
    assert timeline.outside([stranger]) == [stranger]


def test_a_takeover_after_expiry_is_clean_and_one_before_it_is_early() -> None:
    clean = [_lease_write("a", "A", 100.0), _lease_write("b", "B", 116.0)]
    early = [_lease_write("a", "A", 100.0), _lease_write("b", "B", 101.0)]

    clean_timeline, early_timeline = (
        lease_timeline(clean, NS, LEASE),
        lease_timeline(early, NS, LEASE),
    )
    assert [a.early for a in clean_timeline.acquisitions] == [False, False]
    assert [a.early for a in early_timeline.acquisitions] == [False, True]
    # The early taker ends the first tenure: two holders never overlap.
    assert early_timeline.tenures[0].end == 101.0
    assert clean_timeline.holders() == ["a", "b"]


def test_a_release_ends_the_tenure_and_an_immediate_takeover_after_it_is_not_early() -> None:
    writes = [
        _lease_write("a", "A", 100.0),
        _lease_write("a", "", 103.0),
        _lease_write("b", "B", 103.5),
    ]
    timeline = lease_timeline(writes, NS, LEASE)

    assert [(t.user, t.end, t.released) for t in timeline.tenures] == [
        ("a", 103.0, True),
        ("b", 118.5, False),
    ]
    assert [a.early for a in timeline.acquisitions] == [False, False]


def test_failed_writes_and_other_leases_do_not_count() -> None:
    writes = [
        _lease_write("a", "A", 100.0),
        _lease_write("b", "B", 101.0, code=409),
        AuditRecord("c", "update", "leases", "", NS, "other", 200, 101.0, 101.1, {"kind": "Lease"}),
    ]
    assert lease_timeline(writes, NS, LEASE).holders() == ["a"]


def test_the_log_reader_parses_records_as_the_file_grows(tmp_path: Path) -> None:
    path = tmp_path / "audit.log"
    event = {
        "user": {"username": "sched-0-0"},
        "verb": "create",
        "objectRef": {"resource": "pods", "subresource": "binding", "namespace": NS, "name": "p"},
        "responseStatus": {"code": 201},
        "requestReceivedTimestamp": "2026-12-01T10:00:00.123456Z",
        "stageTimestamp": "2026-12-01T10:00:00.200000Z",
    }
    line = json.dumps(event)
    log = AuditLog(path)
    assert log.records() == []
    path.write_text(line + "\n" + line[:20])
    [first] = log.records()
    with path.open("a") as file:
        file.write(line[20:] + "\n")
    records = log.records()

    assert len(records) == 2
    assert first.is_binding and first.succeeded and first.user == "sched-0-0"
    assert round(first.completed_at - first.received_at, 6) == 0.076544
