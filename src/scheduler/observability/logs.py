"""Structured logs in klog's formats: one style for the scheduler's records and every library's.

`configure_logging` is called once at start-up. Afterwards `get_logger(__name__)` loggers and
plain `logging` loggers (kubernetes_asyncio, aiohttp, asyncio, ...) write the same lines to the
same stream, as kube-scheduler's operators know them: klog's JSON records for
`--logging-format=json`, klog's text lines otherwise:

    I1201 10:03:50.123456    4242 scheduler.py:371] "Successfully bound pod to node" pod="ns/p"

Call sites log a constant message and key/value pairs: `log.info("Bound pod", pod=key)`.

Field names. Use these keys so one query finds a pod, node or plugin in every component:

==========  ===============================================================================
msg         the message: a short, constant sentence ("Successfully bound pod to node")
ts          milliseconds since the epoch, a float (JSON), as klog's JSON format writes it
caller      file:line of the call
v           the klog verbosity of the message (0 unless sent with `log_v`)
level       info, warning or error (debug for records below V_DEBUG's threshold)
logger      the module that logged (the name given to `get_logger`, or the stdlib logger's)
pod         the pod as "namespace/name" (`Pod.key`)
node        the node's name
err         the error, in words (upstream's `err` key)
plugin      the plugin's name as configured in the profile
profile     the schedulerName of the profile that handled the pod
exception   the formatted traceback, on records logged with `exception()` or `exc_info`
==========  ===============================================================================

Verbosity follows klog's `-v` levels: 0 logs what an operator always wants; `V_BIND` (2) adds
a line per bound pod and per unschedulable pod (with why); `V_ATTEMPT` (4) a line per
scheduling attempt and debug records; `V_PLUGIN` (5) per-plugin detail; `V_LIBRARY_DEBUG` (6)
also lets libraries' debug records through (HTTP traffic, as kube-scheduler shows requests from
-v=6). Verbose messages cost nothing when disabled if callers test `enabled(level)` or use
`log_v`.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from datetime import UTC
from datetime import datetime
from typing import Any
from typing import Final
from typing import Literal
from typing import TextIO

import structlog
from structlog.processors import CallsiteParameter
from structlog.typing import EventDict
from structlog.typing import FilteringBoundLogger
from structlog.typing import Processor

V_BIND: Final = 2
V_ATTEMPT: Final = 4
V_DEBUG: Final = 4
V_PLUGIN: Final = 5
V_LIBRARY_DEBUG: Final = 6

LogFormat = Literal["text", "json"]

# Our handler on the root logger carries this name so reconfiguring replaces it instead of
# stacking a second one (and leaves handlers others installed, such as pytest's, alone).
_HANDLER_NAME: Final = "kube-pyscheduler"


class _Settings:
    """The process-wide verbosity (logging is process-wide by nature)."""

    __slots__ = ("verbosity",)

    def __init__(self) -> None:
        self.verbosity = 0


_settings = _Settings()


def enabled(level: int) -> bool:
    """Whether messages of klog verbosity `level` are logged; V(0) always is."""
    return _settings.verbosity >= level


def verbosity() -> int:
    """The configured `-v` level."""
    return _settings.verbosity


def log_v(logger: FilteringBoundLogger, level: int, event: str, **fields: Any) -> None:
    """Log `event` only when verbosity `level` is enabled, tagged with `v=level`.

    Levels below `V_DEBUG` log at info, as klog's V(n).Info does; higher ones at debug.
    A record that needs no work to build can skip the level test: a disabled `log_v` returns
    before any formatting.
    """
    if _settings.verbosity < level:
        return
    if level >= V_DEBUG:
        logger.debug(event, v=level, **fields)
    else:
        logger.info(event, v=level, **fields)


def configure_logging(
    format: LogFormat,
    verbosity: int,
    stream: TextIO | None = None,
    *,
    cache_loggers: bool = True,
) -> None:
    """Route structlog and stdlib logging to `stream` (stderr by default) in one format.

    `cache_loggers=False` makes loggers re-read the configuration on every call; only tests
    that reconfigure logging repeatedly need that, as it costs a little per record.
    """
    if format not in ("text", "json"):
        raise ValueError(f'logging format must be "text" or "json", got {format!r}')
    if verbosity < 0:
        raise ValueError(f"verbosity must not be negative, got {verbosity}")
    out: TextIO = _CurrentStderr() if stream is None else stream  # type: ignore[assignment]
    rendering = _rendering(format)
    common: list[Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.stdlib.add_logger_name,
        _epoch_millis,
        structlog.processors.CallsiteParameterAdder(
            [CallsiteParameter.FILENAME, CallsiteParameter.LINENO],
            additional_ignores=[__name__],
        ),
    ]
    structlog.configure(
        processors=[*common, _klog_fields, structlog.processors.StackInfoRenderer(), *rendering],
        wrapper_class=_VerbosityFilteredLogger,
        logger_factory=_NamedWriterFactory(out),
        context_class=dict,
        cache_logger_on_first_use=cache_loggers,
    )
    foreign_chain: list[Processor] = [
        *common,
        structlog.stdlib.ExtraAdder(),
        _klog_fields,
    ]
    handler = logging.StreamHandler(out)
    handler.set_name(_HANDLER_NAME)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            processors=[structlog.stdlib.ProcessorFormatter.remove_processors_meta, *rendering],
            foreign_pre_chain=foreign_chain,
        )
    )
    root = logging.getLogger()
    _remove_our_handler(root)
    root.addHandler(handler)
    set_verbosity(verbosity)


def set_verbosity(verbosity: int) -> None:
    """Change the verbosity of a running process (`PUT /debug/flags/v`); every logger, cached
    or not, follows at once."""
    if verbosity < 0:
        raise ValueError(f"verbosity must not be negative, got {verbosity}")
    _settings.verbosity = verbosity
    logging.getLogger().setLevel(logging.DEBUG if verbosity >= V_LIBRARY_DEBUG else logging.INFO)


_DebugCapable: Any = structlog.make_filtering_bound_logger(logging.DEBUG)


class _VerbosityFilteredLogger(_DebugCapable):  # type: ignore[misc]
    """structlog's logger filtering at DEBUG, whose `debug` asks the verbosity at each call.

    A logger caches its class on first use, so a class fixed at start-up (filtering at INFO
    below V_DEBUG) would keep dropping debug records after the verbosity is raised.
    """

    def debug(self, event: str | None = None, *args: Any, **kw: Any) -> Any:
        if _settings.verbosity < V_DEBUG:
            return None
        return super().debug(event, *args, **kw)


def reset_logging() -> None:
    """Undo `configure_logging`: structlog defaults, our root handler gone, verbosity 0."""
    structlog.reset_defaults()
    _remove_our_handler(logging.getLogger())
    _settings.verbosity = 0


class _CurrentStderr:
    """Whatever `sys.stderr` is when a record is written (tests and embedders replace it)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()

    def isatty(self) -> bool:
        return _is_tty(sys.stderr)


class _NamedWriter(structlog.WriteLogger):
    """A WriteLogger that knows its name, so `add_logger_name` treats it like a stdlib logger.

    Writing directly (instead of through stdlib logging) skips a LogRecord and a handler
    lock per record; the name keeps the `logger` field identical on both paths.
    """

    def __init__(self, file: TextIO, name: str) -> None:
        super().__init__(file)
        self.name = name


class _NamedWriterFactory:
    __slots__ = ("_file",)

    def __init__(self, file: TextIO) -> None:
        self._file = file

    def __call__(self, *args: Any) -> _NamedWriter:
        return _NamedWriter(self._file, str(args[0]) if args else "")


def _epoch_millis(_logger: Any, _method: str, event: EventDict) -> EventDict:
    """`ts` as component-base's JSON logger writes it: milliseconds since the epoch."""
    event["ts"] = time.time_ns() / 1e6
    return event


def _klog_fields(_logger: Any, _method: str, event: EventDict) -> EventDict:
    """klog's keys: `msg` for the message, `caller` as file:line, `v` on every record."""
    event["msg"] = event.pop("event", "")
    if event.get("message") == event["msg"]:
        del event["message"]  # a stdlib record's formatted message, already the msg
    filename, lineno = event.pop("filename", None), event.pop("lineno", None)
    if filename is not None:
        event["caller"] = f"{filename}:{lineno}"
    event.setdefault("v", 0)
    return event


# klog's severity letters, by level.
_SEVERITY = {"debug": "I", "info": "I", "warning": "W", "error": "E", "critical": "F"}
# Printed first, in this order; the rest follow as the call site gave them.
_HEADER_KEYS = ("ts", "caller", "msg", "level", "v", "logger")


def _klog_text(_logger: Any, _method: str, event: EventDict) -> str:
    """One klog text line: `I1201 10:03:50.123456 <pid> file.py:12] "msg" key="value" ...`."""
    stamp = datetime.fromtimestamp(float(event.get("ts", 0.0)) / 1000, UTC)
    severity = _SEVERITY.get(str(event.get("level", "info")), "I")
    caller = event.get("caller", "???:0")
    parts = [
        f"{severity}{stamp:%m%d %H:%M:%S.%f} {os.getpid():7d} {caller}]",
        json.dumps(str(event.get("msg", ""))),
    ]
    traceback = event.pop("exception", None)
    for key, value in event.items():
        # The header carries the rest; a verbosity shows only when it is not 0.
        if (key == "v" and not value) or (key != "v" and key in _HEADER_KEYS):
            continue
        parts.append(f"{key}={_text_value(value)}")
    line = " ".join(parts)
    return f"{line}\n{traceback}" if traceback else line


def _text_value(value: Any) -> str:
    """A value as klog's text format writes it: numbers, booleans, lists and maps as JSON,
    anything else as a quoted string, or as a block of tab-indented lines if it has several."""
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, (list, tuple, dict)):
        return json.dumps(value, separators=(",", ":"), default=str)
    return _text_string(value if isinstance(value, str) else str(value))


def _text_string(text: str) -> str:
    """klog's form for a string: quoted on the line, or, with line breaks, each line of it on
    a line of its own after `<`, tab-indented, and ` >` to close (a space, so that no line of
    the value can pass for the end)."""
    if "\n" not in text:
        return json.dumps(text)
    lines = text.removesuffix("\n").split("\n")
    body = "".join(f"\t{line}\n" for line in lines)
    return f"<\n{body} >"


def _rendering(format: LogFormat) -> list[Processor]:
    # Plain tracebacks only: fancier renderers print local variables, which may hold secrets.
    if format == "json":
        return [
            structlog.processors.format_exc_info,
            _klog_order,
            structlog.processors.JSONRenderer(),
        ]
    return [structlog.processors.format_exc_info, _klog_text]


def _klog_order(_logger: Any, _method: str, event: EventDict) -> EventDict:
    """klog's keys first, in klog's order, so records read the same as kube-scheduler's."""
    ordered = {key: event.pop(key) for key in _HEADER_KEYS if key in event}
    ordered.update(event)
    return ordered


def _is_tty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # detached or closed streams
        return False


def _remove_our_handler(root: logging.Logger) -> None:
    for handler in list(root.handlers):
        if handler.get_name() == _HANDLER_NAME:
            root.removeHandler(handler)
            handler.close()
