"""The change log readers catch up from: every change counted, and an honest "no longer
known" once the log has started over past a reader's revision."""

from __future__ import annotations

from scheduler.framework.change_log import ChangeLog


def test_revisions_count_every_change_and_name_the_keys_since() -> None:
    log = ChangeLog()
    assert log.revision == 0
    log.record(("ns", "a"))
    log.record(("", "cluster-scoped"))
    assert log.revision == 2
    assert log.since(0) == [("ns", "a"), ("", "cluster-scoped")]
    assert log.since(1) == [("", "cluster-scoped")]
    assert log.since(2) == []


def test_keys_are_kept_only_from_the_first_reader_on() -> None:
    log = ChangeLog()
    log.record(("ns", "a"))
    log.record(("ns", "b"))
    assert log.since(0) is None  # nobody was reading: nothing was kept
    assert log.revision == 2
    log.record(("ns", "c"))
    assert log.since(0) is None
    assert log.since(2) == [("ns", "c")]


def test_a_reader_from_before_the_log_started_over_reads_everything() -> None:
    log = ChangeLog(limit=3)
    start = log.revision
    for name in "abcd":
        log.record(("ns", name))
    # The fourth change started the log over: revisions before 3 are no longer reachable.
    assert log.revision == 4
    assert log.since(start) is None
    assert log.since(2) is None
    assert log.since(3) == [("ns", "d")]
    # A revision from the future is not one this log gave out.
    assert log.since(5) is None
