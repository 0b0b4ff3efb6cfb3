"""Structured logs: one format for the scheduler's own records and for every library's.

`configure_logging` is called once at start-up. Afterwards `get_logger(__name__)` loggers and
plain `logging` loggers (kubernetes_asyncio, aiohttp, asyncio, ...) write the same lines to the
same stream: JSON objects for `--logging-format=json`, aligned `key=value` text otherwise.

Field names. Use these keys so one query finds a pod, node or plugin in every component:

==========  ===============================================================================
event       the message: a short, constant sentence ("Successfully bound pod to node")
level       debug, info, warning, error or critical
timestamp   ISO 8601 in UTC, ending in "Z"
logger      the module that logged (the name given to `get_logger`, or the stdlib logger's)
v           the klog verbosity of a verbose message (only on messages sent with `log_v`)
pod         the pod as "namespace/name" (`Pod.key`)
node        the node's name
plugin      the plugin's name as configured in the profile
reason      why something happened, in words: a Status reason or an Event message
profile     the schedulerName of the profile that handled the pod
exception   the formatted traceback, on records logged with `exception()` or `exc_info`
==========  ===============================================================================

Verbosity follows klog's `-v` levels: 0 logs what an operator always wants, `V_BIND` (2) adds a
line per successful binding, `V_ATTEMPT` (3) a line per scheduling attempt, `V_DEBUG` (4) and
above turn on debug records, and `V_LIBRARY_DEBUG` (6) also lets libraries' debug records
through (HTTP traffic, as kube-scheduler shows requests from -v=6). Verbose messages cost
nothing when disabled if callers test `enabled(level)` or use `log_v`.
"""

from __future__ import annotations

import logging
import sys
from typing import Any, Final, Literal, TextIO, cast

import structlog
from structlog.typing import FilteringBoundLogger, Processor

V_BIND: Final = 2
V_ATTEMPT: Final = 3
V_DEBUG: Final = 4
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


def get_logger(name: str) -> FilteringBoundLogger:
    """A logger whose records carry `logger=name` once `configure_logging` has run.

    Safe to call at import time: the logger takes its configuration when it first logs.
    """
    # The name reaches the logger factory when the logger is first used (see _NamedWriter).
    return cast(FilteringBoundLogger, structlog.get_logger(name))


def log_v(logger: FilteringBoundLogger, level: int, event: str, **fields: Any) -> None:
    """Log `event` only when verbosity `level` is enabled, tagged with `v=level`.

    Levels below `V_DEBUG` log at info, as klog's V(n).Info does; higher ones at debug.
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
    rendering = _rendering(format, out)
    common: list[Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
    ]
    structlog.configure(
        processors=[*common, structlog.processors.StackInfoRenderer(), *rendering],
        wrapper_class=structlog.make_filtering_bound_logger(
            logging.DEBUG if verbosity >= V_DEBUG else logging.INFO
        ),
        logger_factory=_NamedWriterFactory(out),
        context_class=dict,
        cache_logger_on_first_use=cache_loggers,
    )
    foreign_chain: list[Processor] = [
        *common,
        structlog.stdlib.ExtraAdder(),
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
    root.setLevel(logging.DEBUG if verbosity >= V_LIBRARY_DEBUG else logging.INFO)
    _settings.verbosity = verbosity


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


def _rendering(format: LogFormat, out: TextIO) -> list[Processor]:
    if format == "json":
        return [structlog.processors.format_exc_info, structlog.processors.JSONRenderer()]
    # Plain tracebacks: the fancy default prints local variables, which may hold secrets.
    return [
        structlog.dev.ConsoleRenderer(
            colors=_is_tty(out), exception_formatter=structlog.dev.plain_traceback
        )
    ]


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
