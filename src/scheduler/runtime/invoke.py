"""Every call from the scheduler into plugin code goes through this module.

Plugins are user code, and Python does not stop them from raising, returning None or the wrong
type, or scoring NaN. Whatever a plugin does, the scheduler gets a value it can use: the
plugin's own result when it keeps the contract, otherwise an Error `Status` (a `PluginFault`)
whose message names the plugin, the extension point and what went wrong. The fault is logged
here, once, with its traceback; the scheduling or binding cycle then fails the pod exactly as it
fails any Error status (Event, condition, metrics, requeue with backoff).

Loops over nodes (per-node Filter and Score) stop at the first fault by raising `PluginError`,
which fails the whole attempt, as upstream does when any node's plugin returns Error.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any
from typing import TypeVar

import numpy as np
import numpy.typing as npt

from scheduler.framework.batch import FilterBatch
from scheduler.framework.cycle_state import CycleState
from scheduler.framework.events import QueueingHint
from scheduler.framework.events import QueueingHintFn
from scheduler.framework.node_info import NodeInfo
from scheduler.framework.node_table import NodeTable
from scheduler.framework.plugins import AwaitingPostFilterPlugin
from scheduler.framework.plugins import BatchFilterPlugin
from scheduler.framework.plugins import BatchScorePlugin
from scheduler.framework.plugins import FilterPlugin
from scheduler.framework.plugins import PermitPlugin
from scheduler.framework.plugins import PostFilterPlugin
from scheduler.framework.plugins import PostFilterResult
from scheduler.framework.plugins import PreFilterPlugin
from scheduler.framework.plugins import PreFilterResult
from scheduler.framework.plugins import ScorePlugin
from scheduler.framework.queued_pod import QueuedPodInfo
from scheduler.framework.status import MAX_NODE_SCORE
from scheduler.framework.status import MIN_NODE_SCORE
from scheduler.framework.status import Code
from scheduler.framework.status import Status
from scheduler.framework.status import raised
from scheduler.objects.pod import Pod
from scheduler.observability import get_logger

Rows = npt.NDArray[np.int64]
Scores = npt.NDArray[np.int64]
T = TypeVar("T")

_log = get_logger("scheduler.plugins")

# How upstream words an Error at each extension point; the rest use the default.
_ERROR_TEXT = {
    "Filter": 'running "{plugin}" filter plugin: {message}',
    "Score": 'running Score plugins: plugin "{plugin}" failed with: {message}',
    "NormalizeScore": (
        'running Normalize on Score plugins: plugin "{plugin}" failed with: {message}'
    ),
    "AddPod": 'running AddPod on PreFilter plugin "{plugin}": {message}',
    "RemovePod": 'running RemovePod on PreFilter plugin "{plugin}": {message}',
    "PreBindPreFlight": 'running PreBindPreFlight "{plugin}": {message}',
}
_DEFAULT_ERROR_TEXT = 'running {point} plugin "{plugin}": {message}'


class PluginFault(Status):
    """An Error made from a plugin's misbehaviour; it already names plugin and point."""

    __slots__ = ()


class PluginError(Exception):
    """Fails the whole attempt with `status` (raised out of loops over nodes)."""

    def __init__(self, status: Status) -> None:
        super().__init__(status.message())
        self.status = status


def _text(point: str, plugin: str, message: str) -> str:
    return _ERROR_TEXT.get(point, _DEFAULT_ERROR_TEXT).format(
        point=point, plugin=plugin, message=message
    )


def error_status(point: str, plugin: str, status: Status) -> Status:
    """The Error an attempt fails with when `plugin` returned neither success nor a rejection."""
    if isinstance(status, PluginFault):
        return status
    return Status.from_error(_text(point, plugin, status.message())).with_plugin(plugin)


def plugin_failure(point: str, plugin: str, status: Status) -> Status:
    """What a plugin's unsuccessful status fails the attempt with: a rejection as it is, named
    after the plugin, and anything else (Error, or a code the point does not allow) as an
    Error in upstream's words."""
    if status.is_rejected:
        return status.with_plugin(plugin)
    return error_status(point, plugin, status)


def fault(point: str, plugin: str, problem: str, exc: BaseException | None = None) -> PluginFault:
    """Log a plugin's misbehaviour (with the traceback of `exc`) and make it an Error."""
    message = _text(point, plugin, problem)
    _log.error(
        "Plugin failed", plugin=plugin, extension_point=point, err=message, exc_info=exc or False
    )
    return PluginFault(Code.ERROR, message, plugin=plugin)


def _kind(value: object) -> str:
    return "None" if value is None else f"a {type(value).__name__}"


def _status_or_fault(point: str, plugin: str, value: object) -> Status:
    if isinstance(value, Status):
        return value
    return fault(point, plugin, f"returned {_kind(value)} where a Status was expected")


def call_status(point: str, plugin: str, method: Callable[..., Status], *args: Any) -> Status:
    """Call a plugin method that returns a Status."""
    try:
        value = method(*args)
    except Exception as exc:
        return fault(point, plugin, raised(exc), exc)
    return _status_or_fault(point, plugin, value)


async def await_status(
    point: str, plugin: str, method: Callable[..., Awaitable[Status]], *args: Any
) -> Status:
    """Call and await a plugin coroutine that returns a Status (PreBind, Bind)."""
    try:
        value = await method(*args)
    except Exception as exc:
        return fault(point, plugin, raised(exc), exc)
    return _status_or_fault(point, plugin, value)


def call_for_lines(
    point: str, plugin: str, method: Callable[..., object], *args: Any
) -> tuple[str, ...]:
    """Call a method that returns lines of text (`explain`'s details): anything else, or a
    failure, is logged and gives no lines."""
    try:
        value = method(*args)
    except Exception as exc:
        fault(point, plugin, raised(exc), exc)
        return ()
    if isinstance(value, str) or not isinstance(value, Sequence):
        fault(point, plugin, f"returned {_kind(value)} where lines of text were expected")
        return ()
    return tuple(str(line) for line in value)


def call_for_effect(point: str, plugin: str, method: Callable[..., object], *args: Any) -> None:
    """Call a method whose result is ignored (Unreserve): a failure is logged, nothing more."""
    try:
        method(*args)
    except Exception as exc:
        fault(point, plugin, raised(exc), exc)


async def await_for_effect(
    point: str, plugin: str, method: Callable[..., Awaitable[object]], *args: Any
) -> None:
    """Await a coroutine whose result is ignored (PostBind): a failure is only logged."""
    try:
        await method(*args)
    except Exception as exc:
        fault(point, plugin, raised(exc), exc)


def sign(plugin: str, method: Callable[[Pod], object], pod: Pod) -> Mapping[str, object] | None:
    """A plugin's `sign_pod`: its fragments, or None. A failure, or anything but a mapping with
    string keys, is logged and makes the pod unsignable: it is then scheduled without batching,
    which costs it nothing else."""
    try:
        value = method(pod)
    except Exception as exc:
        fault("Sign", plugin, raised(exc), exc)
        return None
    if value is None:
        return None
    if isinstance(value, Mapping) and all(isinstance(key, str) for key in value):
        return value
    fault("Sign", plugin, f"returned {_kind(value)} where a mapping of fragments was expected")
    return None


def extensions(point: str, plugin: str, getter: Callable[[], T | None]) -> T | Status | None:
    """`pre_filter_extensions()` / `score_extensions()`: the object, None, or a fault Status."""
    try:
        return getter()
    except Exception as exc:
        return fault(point, plugin, raised(exc), exc)


def _pair(
    point: str, plugin: str, call: Callable[[], object], first: type[T]
) -> tuple[T | None, Status]:
    """The (`first` | None, Status) pair a PreFilter or PostFilter plugin returns, or a fault."""
    try:
        value = call()
    except Exception as exc:
        return None, fault(point, plugin, raised(exc), exc)
    return _checked_pair(point, plugin, value, first)


async def _awaited_pair(
    point: str, plugin: str, call: Callable[[], Awaitable[object]], first: type[T]
) -> tuple[T | None, Status]:
    """`_pair` for a plugin coroutine."""
    try:
        value = await call()
    except Exception as exc:
        return None, fault(point, plugin, raised(exc), exc)
    return _checked_pair(point, plugin, value, first)


def _checked_pair(
    point: str, plugin: str, value: object, first: type[T]
) -> tuple[T | None, Status]:
    if (
        isinstance(value, tuple)
        and len(value) == 2
        and (value[0] is None or isinstance(value[0], first))
        and isinstance(value[1], Status)
    ):
        return value[0], value[1]
    expected = f"a ({first.__name__} | None, Status) pair"
    return None, fault(point, plugin, f"returned {_kind(value)} where {expected} was expected")


def pre_filter(
    plugin: PreFilterPlugin, state: CycleState, pod: Pod, table: NodeTable
) -> tuple[PreFilterResult | None, Status]:
    return _pair(
        "PreFilter", plugin.name, lambda: plugin.pre_filter(state, pod, table), PreFilterResult
    )


def post_filter(
    plugin: PostFilterPlugin, state: CycleState, pod: Pod, statuses: Any
) -> tuple[PostFilterResult | None, Status]:
    return _pair(
        "PostFilter",
        plugin.name,
        lambda: plugin.post_filter(state, pod, statuses),
        PostFilterResult,
    )


async def post_filter_awaiting(
    plugin: AwaitingPostFilterPlugin, state: CycleState, pod: Pod, statuses: Any
) -> tuple[PostFilterResult | None, Status]:
    return await _awaited_pair(
        "PostFilter",
        plugin.name,
        lambda: plugin.post_filter_awaiting(state, pod, statuses),
        PostFilterResult,
    )


def permit(
    plugin: PermitPlugin, state: CycleState, pod: Pod, node_name: str
) -> tuple[Status, float]:
    """The plugin's (status, timeout); a timeout must be a non-negative number of seconds."""
    name = plugin.name
    try:
        value = plugin.permit(state, pod, node_name)
    except Exception as exc:
        return fault("Permit", name, raised(exc), exc), 0.0
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], Status):
        status, timeout = value
        number = not isinstance(timeout, bool) and isinstance(timeout, (int, float))
        if number and not math.isnan(timeout) and timeout >= 0:
            return status, float(timeout)
        return fault("Permit", name, f"returned the timeout {timeout!r}; seconds >= 0"), 0.0
    expected = "a (Status, seconds) pair"
    return fault("Permit", name, f"returned {_kind(value)} where {expected} was expected"), 0.0


# ---- loops over nodes -------------------------------------------------------------------


def filter_rows(
    plugin: FilterPlugin,
    state: CycleState,
    pod: Pod,
    infos: Sequence[NodeInfo],
    rows: Sequence[int],
) -> list[tuple[int, Status]]:
    """Per-node Filter over `rows`: (position in `rows`, status) of every node that failed.

    Raises PluginError at the first Error (raised, wrong type, or returned).
    """
    name = plugin.name
    method = plugin.filter
    failed: list[tuple[int, Status]] = []
    for i, row in enumerate(rows):
        try:
            status = method(state, pod, infos[row])
        except Exception as exc:
            raise PluginError(fault("Filter", name, raised(exc), exc)) from None
        if type(status) is not Status and not isinstance(status, Status):
            raise PluginError(_status_or_fault("Filter", name, status))
        if status.code is Code.SUCCESS:
            continue
        if not status.is_rejected:
            raise PluginError(error_status("Filter", name, status))
        failed.append((i, status.with_plugin(name)))
    return failed


def _or_raise(point: str, plugin: str, call: Callable[[], T]) -> T:
    try:
        return call()
    except Exception as exc:
        raise PluginError(fault(point, plugin, raised(exc), exc)) from None


def filter_batch(
    plugin: BatchFilterPlugin, state: CycleState, pod: Pod, table: NodeTable, rows: Rows
) -> FilterBatch:
    """Vectorized Filter; the batch must be a FilterBatch with one code per row."""
    name = plugin.name
    batch = _or_raise("Filter", name, lambda: plugin.filter_nodes(state, pod, table, rows))
    if not isinstance(batch, FilterBatch):
        raise PluginError(
            fault("Filter", name, f"filter_nodes returned {_kind(batch)}, not a FilterBatch")
        )
    if len(batch.codes) != len(rows):
        raise PluginError(
            fault(
                "Filter",
                name,
                f"filter_nodes returned {len(batch.codes)} codes for {len(rows)} nodes",
            )
        )
    return batch


_UNSCHEDULABLE = np.int8(Code.UNSCHEDULABLE)
_UNRESOLVABLE = np.int8(Code.UNSCHEDULABLE_AND_UNRESOLVABLE)
_PENDING = np.int8(Code.PENDING)
_CODES = frozenset(int(code) for code in Code)


def rejection_codes(
    plugin: str, batch: FilterBatch, failed: npt.NDArray[np.bool_]
) -> npt.NDArray[np.int8]:
    """The codes of the rows `failed` marks in `batch`, each checked to be a rejection; raises
    PluginError for the first that is not. Upstream makes any Filter status other than
    Success or a rejection an Error, and so do we: an Error as it is, Skip or Wait with the
    plugin's reasons, a number that is no status code as a fault."""
    codes = batch.codes[failed]
    if codes.min() >= _UNSCHEDULABLE and codes.max() <= _UNRESOLVABLE:
        return codes  # the usual answer, checked with two reductions
    rejected = (codes == _UNSCHEDULABLE) | (codes == _UNRESOLVABLE) | (codes == _PENDING)
    if rejected.all():
        return codes
    index = int(np.flatnonzero(failed)[np.argmin(rejected)])
    code = int(batch.codes[index])
    if code not in _CODES:
        raise PluginError(
            fault("Filter", plugin, f"filter_nodes returned {code}, which is no status code")
        )
    raise PluginError(error_status("Filter", plugin, Status(Code(code), *batch.reasons_at(index))))


def _integer_score(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, np.integer)):
        return int(value)
    return None


def score_rows(
    plugin: ScorePlugin, state: CycleState, pod: Pod, infos: Sequence[NodeInfo], rows: Rows
) -> Scores:
    """Per-node Score over `rows`; every score must be an integer (raises PluginError)."""
    name = plugin.name
    method = plugin.score
    scores = np.empty(len(rows), dtype=np.int64)
    for i, row in enumerate(rows.tolist()):
        try:
            value, status = method(state, pod, infos[row])
        except Exception as exc:
            raise PluginError(fault("Score", name, raised(exc), exc)) from None
        if not isinstance(status, Status):
            raise PluginError(
                fault("Score", name, f"returned {_kind(status)} where a Status was expected")
            )
        if not status.is_success:
            raise PluginError(error_status("Score", name, status))
        score = _integer_score(value)
        if score is None:
            raise PluginError(
                fault("Score", name, f"returned the score {value!r}; scores are integers")
            )
        scores[i] = score
    return scores


def score_batch(
    plugin: BatchScorePlugin, state: CycleState, pod: Pod, table: NodeTable, rows: Rows
) -> Scores:
    """Vectorized Score: one finite number per row, made int64 (raises PluginError)."""
    name = plugin.name
    raw = np.asarray(_or_raise("Score", name, lambda: plugin.score_nodes(state, pod, table, rows)))
    # Kinds i, u, m (integers, numpy counting timedelta64 among them) and f: issubdtype's
    # integer-or-floating answer without its cost.
    if raw.shape != (len(rows),) or raw.dtype.kind not in "iumf":
        raise PluginError(
            fault(
                "Score",
                name,
                f"score_nodes returned {raw.dtype} values of shape {raw.shape} "
                f"for {len(rows)} nodes",
            )
        )
    if raw.dtype.kind == "f" and not np.isfinite(raw).all():
        bad = raw[~np.isfinite(raw)][0]
        raise PluginError(fault("Score", name, f"score_nodes returned the score {bad}"))
    scores: Scores = raw.astype(np.int64, copy=False)
    return scores


def check_score_range(plugin: str, scores: Scores) -> None:
    """After NormalizeScore every score is in [0, 100] (raises PluginError, upstream's text)."""
    # One reduction: as unsigned, a negative score is huge, so max > 100 catches both ends.
    if len(scores) and int(scores.view(np.uint64).max()) > MAX_NODE_SCORE:
        bad = int(scores[(scores < MIN_NODE_SCORE) | (scores > MAX_NODE_SCORE)][0])
        message = (
            f'applying score defaultWeights on Score plugins: plugin "{plugin}" returns an '
            f"invalid score {bad}, it should in the range of [{MIN_NODE_SCORE}, "
            f"{MAX_NODE_SCORE}] after normalizing"
        )
        _log.error("Plugin failed", plugin=plugin, extension_point="Score", err=message)
        raise PluginError(PluginFault(Code.ERROR, message, plugin=plugin))


# ---- the queue's callbacks -------------------------------------------------------------


def guarded_less(
    plugin: str, less: Callable[[QueuedPodInfo, QueuedPodInfo], bool]
) -> Callable[[QueuedPodInfo, QueuedPodInfo], bool]:
    """QueueSort's `less` that never raises: on a fault, higher priority then older first."""

    def safe_less(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
        try:
            answer = less(a, b)
        except Exception as exc:
            fault("QueueSort", plugin, raised(exc), exc)
            return _fallback_less(a, b)
        if isinstance(answer, (bool, np.bool_)):
            return bool(answer)
        fault("QueueSort", plugin, f"less returned {_kind(answer)} where a bool was expected")
        return _fallback_less(a, b)

    return safe_less


def guarded_sort_key(
    plugin: str, sort_key: Callable[[QueuedPodInfo], Any]
) -> Callable[[QueuedPodInfo], Any]:
    """QueueSort's optional `sort_key`, its faults logged as the plugin's; it still raises, so
    that the active queue stops ranking and falls back to the guarded `less`."""

    def logged_sort_key(info: QueuedPodInfo) -> Any:
        try:
            return sort_key(info)
        except Exception as exc:
            problem = f"sort_key: {raised(exc)}; ordering by less from now on"
            fault("QueueSort", plugin, problem, exc)
            raise

    return logged_sort_key


def _fallback_less(a: QueuedPodInfo, b: QueuedPodInfo) -> bool:
    if a.pod.priority != b.pod.priority:
        return a.pod.priority > b.pod.priority
    return a.timestamp < b.timestamp


def guarded_hint(plugin: str, hint: QueueingHintFn) -> QueueingHintFn:
    """A QueueingHint that never raises: on a fault the pod is queued (it must not strand)."""

    def safe_hint(pod: Pod, old: Any, new: Any) -> QueueingHint:
        try:
            answer = hint(pod, old, new)
        except Exception as exc:
            fault("QueueingHint", plugin, raised(exc), exc)
            return QueueingHint.QUEUE
        if isinstance(answer, QueueingHint):
            return answer
        fault("QueueingHint", plugin, f"returned {_kind(answer)} where a QueueingHint was expected")
        return QueueingHint.QUEUE

    return safe_hint
