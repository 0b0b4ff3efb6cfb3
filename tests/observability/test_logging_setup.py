"""configure_logging: klog's JSON and text formats for structlog and stdlib records alike."""

from __future__ import annotations

import io
import json
import logging
import re
import time
from collections.abc import Iterator
from datetime import UTC
from datetime import datetime
from typing import Any

import pytest
import structlog

from scheduler.observability import V_ATTEMPT
from scheduler.observability import V_BIND
from scheduler.observability import V_DEBUG
from scheduler.observability import V_PLUGIN
from scheduler.observability import configure_logging
from scheduler.observability import enabled
from scheduler.observability import get_logger
from scheduler.observability import log_v
from scheduler.observability import reset_logging
from scheduler.observability import set_verbosity
from scheduler.observability import verbosity

# klog's text header: severity, date, time, pid, caller.
KLOG_HEADER = re.compile(r"^[IWEF]\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ [\w.]+:\d+\] ")


@pytest.fixture(autouse=True)
def _restore_logging() -> Iterator[None]:
    root = logging.getLogger()
    level, handlers = root.level, list(root.handlers)
    yield
    reset_logging()
    structlog.contextvars.clear_contextvars()
    root.setLevel(level)
    assert root.handlers == handlers


def _json_lines(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


def _configure(format: str, level: int) -> io.StringIO:
    stream = io.StringIO()
    configure_logging("json" if format == "json" else "text", level, stream, cache_loggers=False)
    return stream


def test_json_records_carry_the_documented_fields() -> None:
    stream = _configure("json", 0)
    get_logger("scheduler.core.cycle").info(
        "Unable to schedule pod",
        pod="default/web-1",
        node="node-a",
        plugin="NodeResourcesFit",
        reason="Insufficient cpu",
        profile="default-scheduler",
    )

    (record,) = _json_lines(stream)
    assert list(record)[:4] == ["ts", "caller", "msg", "level"]
    assert record["msg"] == "Unable to schedule pod"
    assert record["level"] == "info"
    assert record["v"] == 0
    assert record["logger"] == "scheduler.core.cycle"
    assert record["caller"].startswith("test_logging_setup.py:")
    assert record["pod"] == "default/web-1"
    assert record["node"] == "node-a"
    assert record["plugin"] == "NodeResourcesFit"
    assert record["reason"] == "Insufficient cpu"
    assert record["profile"] == "default-scheduler"
    assert isinstance(record["ts"], float)


@pytest.mark.parametrize(
    ("level", "expected"),
    [
        (0, ["always"]),
        (1, ["always"]),
        (2, ["always", "Successfully bound pod to node"]),
        (3, ["always", "Successfully bound pod to node"]),
        (4, ["always", "Successfully bound pod to node", "Attempting to schedule pod"]),
        (5, ["always", "Successfully bound pod to node", "Attempting to schedule pod", "detail"]),
        (6, ["always", "Successfully bound pod to node", "Attempting to schedule pod", "detail"]),
    ],
    ids=["v0", "v1", "v2", "v3", "v4", "v5", "v6"],
)
def test_verbosity_selects_messages_like_klog(level: int, expected: list[str]) -> None:
    stream = _configure("json", level)
    log = get_logger("scheduler.core")
    log.info("always")
    log_v(log, V_BIND, "Successfully bound pod to node", pod="ns/p", node="n1")
    log_v(log, V_ATTEMPT, "Attempting to schedule pod", pod="ns/p")
    log_v(log, V_PLUGIN, "detail", pod="ns/p")

    records = _json_lines(stream)
    assert [r["msg"] for r in records] == expected
    levels = {r["msg"]: (r["level"], r.get("v")) for r in records}
    assert levels["always"] == ("info", 0)
    if level >= V_PLUGIN:
        assert levels["Successfully bound pod to node"] == ("info", 2)
        assert levels["Attempting to schedule pod"] == ("debug", V_DEBUG)
        assert levels["detail"] == ("debug", 5)


@pytest.mark.parametrize("level", [0, 2, 3, 4, 7])
def test_enabled_answers_for_every_level(level: int) -> None:
    _configure("json", level)
    assert verbosity() == level
    assert [enabled(v) for v in range(8)] == [v <= level for v in range(8)]


def test_stdlib_records_share_the_format() -> None:
    stream = _configure("json", 0)
    logging.getLogger("kubernetes_asyncio.watch").warning(
        "watch of %s restarted", "pods", extra={"reason": "410 Gone"}
    )

    (record,) = _json_lines(stream)
    assert record["msg"] == "watch of pods restarted"
    assert record["level"] == "warning"
    assert record["logger"] == "kubernetes_asyncio.watch"
    assert record["reason"] == "410 Gone"
    assert record["caller"].startswith("test_logging_setup.py:")


@pytest.mark.parametrize(("level", "shown"), [(0, False), (4, False), (6, True)])
def test_library_debug_records_need_verbosity_six(level: int, shown: bool) -> None:
    stream = _configure("json", level)
    logging.getLogger("aiohttp.client").debug("GET /api/v1/pods")
    assert bool(_json_lines(stream)) == shown


def test_context_bound_for_a_cycle_reaches_both_paths() -> None:
    stream = _configure("json", 0)
    structlog.contextvars.bind_contextvars(profile="gpu-scheduler")
    get_logger("scheduler.core").info("ours")
    logging.getLogger("some.library").info("theirs")

    assert [r["profile"] for r in _json_lines(stream)] == ["gpu-scheduler", "gpu-scheduler"]


def test_exceptions_are_rendered_into_the_record() -> None:
    stream = _configure("json", 0)
    try:
        raise ConnectionResetError("apiserver went away")
    except ConnectionResetError:
        get_logger("scheduler.cluster").exception("Binding failed", pod="ns/p")

    (record,) = _json_lines(stream)
    assert record["level"] == "error"
    assert "ConnectionResetError: apiserver went away" in record["exception"]


def test_text_format_is_klogs() -> None:
    stream = _configure("text", 2)
    get_logger("scheduler.core").info("Successfully bound pod to node", pod="ns/p", node="n1")
    log_v(get_logger("scheduler.core"), V_BIND, "Verbose", count=3)
    logging.getLogger("some.library").warning("library says hi")

    first, second, third = stream.getvalue().splitlines()
    assert "\x1b[" not in stream.getvalue()
    assert KLOG_HEADER.match(first), first
    assert first.startswith("I")
    assert first.endswith('] "Successfully bound pod to node" pod="ns/p" node="n1"')
    assert second.endswith('] "Verbose" v=2 count=3')
    assert KLOG_HEADER.match(third), third
    assert third.startswith("W")
    assert third.endswith('] "library says hi"')


def test_text_format_writes_lists_as_json_and_several_lines_as_klogs_block() -> None:
    stream = _configure("text", 0)
    log = get_logger("scheduler.core")
    log.info("Cache mismatch", missedNodes=["n1", "n2"], redundantNodes=[])
    log.info("Dump", lines="first\n\nthird\n", tail="no break\nat the end")

    text = stream.getvalue()
    assert 'Cache mismatch" missedNodes=["n1","n2"] redundantNodes=[]\n' in text
    # Each line of the value tab-indented; ` >` closes, on a line of its own either way.
    assert text.endswith(
        '"Dump" lines=<\n\tfirst\n\t\n\tthird\n > tail=<\n\tno break\n\tat the end\n >\n'
    )


def test_both_formats_stamp_the_time_of_the_record() -> None:
    json_stream = _configure("json", 0)
    before = time.time()
    get_logger("scheduler.core").info("stamped")
    logging.getLogger("some.library").info("stamped too")
    after = time.time()
    # component-base's JSON logger: milliseconds since the epoch, as a float.
    for record in _json_lines(json_stream):
        assert before * 1000 <= record["ts"] <= after * 1000
        assert isinstance(record["ts"], float)
    text_stream = _configure("text", 0)
    get_logger("scheduler.core").info("stamped")
    now = datetime.now(UTC)
    header = datetime.strptime(text_stream.getvalue()[1:21], "%m%d %H:%M:%S.%f")
    stamp = header.replace(year=now.year, tzinfo=UTC)
    assert abs((now - stamp).total_seconds()) < 60


def test_reconfiguring_replaces_our_handler_and_keeps_others() -> None:
    root = logging.getLogger()
    foreign = logging.NullHandler()
    root.addHandler(foreign)
    try:
        _configure("json", 0)
        stream = _configure("json", 0)
        logging.getLogger("some.library").warning("once")
        assert len(_json_lines(stream)) == 1
        assert foreign in root.handlers
    finally:
        root.removeHandler(foreign)


def test_loggers_made_before_configuration_follow_it() -> None:
    early = get_logger("scheduler.early")
    stream = io.StringIO()
    configure_logging("json", 0, stream)
    early.info("configured later", node="n1")

    (record,) = _json_lines(stream)
    assert record["logger"] == "scheduler.early"
    assert record["node"] == "n1"


def test_stderr_is_the_default_stream(capsys: pytest.CaptureFixture[str]) -> None:
    configure_logging("json", 0, cache_loggers=False)
    get_logger("scheduler.app").info("started")
    assert json.loads(capsys.readouterr().err)["msg"] == "started"


def test_reset_removes_our_handler_and_verbosity() -> None:
    _configure("json", 5)
    reset_logging()
    assert verbosity() == 0
    assert not enabled(1)
    assert all(h.get_name() != "kube-pyscheduler" for h in logging.getLogger().handlers)


@pytest.mark.parametrize(
    ("format", "level", "message"),
    [("xml", 0, "text"), ("json", -1, "negative")],
    ids=["unknown-format", "negative-verbosity"],
)
def test_invalid_settings_are_rejected(format: Any, level: int, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        configure_logging(format, level, io.StringIO())


def test_a_verbosity_set_at_run_time_reaches_loggers_already_in_use() -> None:
    stream = io.StringIO()
    # Cached loggers, as the daemon configures them: each keeps its class after first use.
    configure_logging("json", 0, stream, cache_loggers=True)
    log = get_logger("scheduler.core.cycle")
    library = logging.getLogger("kubernetes_asyncio.rest")
    log.debug("hidden at 0")
    log_v(log, V_ATTEMPT, "Attempting to schedule pod", pod="default/a")
    library.debug("hidden below 6")

    set_verbosity(V_ATTEMPT)
    log.debug("shown at 4")
    log_v(log, V_ATTEMPT, "Attempting to schedule pod", pod="default/b")
    library.debug("still hidden below 6")
    set_verbosity(6)
    library.debug("shown at 6")
    set_verbosity(0)
    log.debug("hidden again")
    log_v(log, V_ATTEMPT, "Attempting to schedule pod", pod="default/c")

    assert [(r["msg"], r.get("pod")) for r in _json_lines(stream)] == [
        ("shown at 4", None),
        ("Attempting to schedule pod", "default/b"),
        ("shown at 6", None),
    ]
    assert verbosity() == 0


def test_a_negative_verbosity_is_refused_at_run_time() -> None:
    _configure("text", 2)
    with pytest.raises(ValueError, match="must not be negative"):
        set_verbosity(-1)
    assert verbosity() == 2
