"""Plugin outcomes: the seven upstream status codes and the Status value."""

from __future__ import annotations

from enum import IntEnum

MAX_NODE_SCORE = 100
MIN_NODE_SCORE = 0


class Code(IntEnum):
    """Upstream's codes, in upstream's order (the values are part of the contract).

    Which codes each extension point accepts, and what it does with them, is written on the
    point's Protocol in `scheduler.framework.plugins`.
    """

    SUCCESS = 0
    """The plugin is satisfied; the attempt goes on. Any point may return it."""
    ERROR = 1
    """Something went wrong that is not the pod's fault (a bug, an API failure). The attempt
    fails, the pod gets a FailedScheduling Event and PodScheduled=False with reason
    SchedulerError, and it is retried after backoff whatever events arrive. A plugin that
    raises or returns the wrong type is treated exactly as if it returned this."""
    UNSCHEDULABLE = 2
    """The pod does not fit here now, but preemption or a cluster change might help. From
    Filter it rejects one node; from PreFilter, Reserve or Permit the whole attempt. The pod
    waits until an event the rejecting plugin registered may help."""
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    """Like UNSCHEDULABLE, but preemption cannot help (e.g. a node selector mismatch):
    PostFilter skips such nodes, and from PreFilter it ends the attempt at once."""
    WAIT = 4
    """Permit only: hold the pod before binding until allowed, rejected or timed out."""
    SKIP = 5
    """PreFilter / PreScore: this plugin has nothing to do for the pod, so its Filter / Score
    is skipped for the attempt. Bind: let the next Bind plugin bind. PreBind: nothing to do."""
    PENDING = 6
    """The pod waits for something outside the scheduler (e.g. a claim being allocated); it is
    retried as soon as an event the plugin registered says so, without backoff."""

    @property
    def label(self) -> str:
        """The upstream spelling, used as the `status` metric label."""
        return _LABELS[self]


_LABELS = {
    Code.SUCCESS: "Success",
    Code.ERROR: "Error",
    Code.UNSCHEDULABLE: "Unschedulable",
    Code.UNSCHEDULABLE_AND_UNRESOLVABLE: "UnschedulableAndUnresolvable",
    Code.WAIT: "Wait",
    Code.SKIP: "Skip",
    Code.PENDING: "Pending",
}

_REJECTED = frozenset({Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING})


class Status:
    """The result of running a plugin. Immutable; `None` is never used for success."""

    __slots__ = ("code", "error", "plugin", "reasons")

    code: Code
    reasons: tuple[str, ...]
    plugin: str
    error: BaseException | None

    def __init__(
        self,
        code: Code = Code.SUCCESS,
        *reasons: str,
        plugin: str = "",
        error: BaseException | None = None,
    ) -> None:
        object.__setattr__(self, "code", code)
        object.__setattr__(self, "reasons", reasons)
        object.__setattr__(self, "plugin", plugin)
        object.__setattr__(self, "error", error)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Status is immutable")

    # Constructors read better at call sites than Status(Code.X, ...).
    @classmethod
    def unschedulable(cls, *reasons: str) -> Status:
        return cls(Code.UNSCHEDULABLE, *reasons)

    @classmethod
    def unresolvable(cls, *reasons: str) -> Status:
        return cls(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, *reasons)

    @classmethod
    def from_error(cls, error: BaseException | str) -> Status:
        if isinstance(error, str):
            return cls(Code.ERROR, error)
        return cls(Code.ERROR, error=error)

    @classmethod
    def missing_state(cls, key: str, *, lead: str = "error reading") -> Status:
        """A plugin's own cycle state is absent: its PreFilter/PreScore did not run (or was
        skipped), so the framework should not have called it. Upstream's words; PodTopologySpread
        and DynamicResources say `reading` where the others say `error reading`."""
        return cls(Code.ERROR, f'{lead} "{key}" from cycleState: not found')

    @classmethod
    def skip(cls) -> Status:
        return SKIP

    @classmethod
    def wait(cls, *reasons: str) -> Status:
        return cls(Code.WAIT, *reasons)

    @classmethod
    def pending(cls, *reasons: str) -> Status:
        return cls(Code.PENDING, *reasons)

    def with_plugin(self, plugin: str) -> Status:
        if self.plugin == plugin:
            return self
        return Status(self.code, *self.reasons, plugin=plugin, error=self.error)

    def message(self) -> str:
        """All reasons joined by ", ", the attached error's text first."""
        return ", ".join(self.all_reasons())

    def all_reasons(self) -> tuple[str, ...]:
        """The reasons, the attached error's text first: what upstream's Status.Reasons() gives,
        and so what a FitError counts (a status with neither counts for nothing)."""
        if self.error is None:
            return self.reasons
        return (str(self.error), *self.reasons)

    @property
    def is_success(self) -> bool:
        return self.code is Code.SUCCESS

    @property
    def is_rejected(self) -> bool:
        return self.code in _REJECTED

    @property
    def is_skip(self) -> bool:
        return self.code is Code.SKIP

    @property
    def is_wait(self) -> bool:
        return self.code is Code.WAIT

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Status):
            return NotImplemented
        return (self.code, self.message(), self.plugin) == (
            other.code,
            other.message(),
            other.plugin,
        )

    def __hash__(self) -> int:
        return hash((self.code, self.reasons, self.plugin))

    def __repr__(self) -> str:
        plugin = f" plugin={self.plugin}" if self.plugin else ""
        return f"Status({self.code.label}{plugin}: {self.message()!r})"


SUCCESS = Status()
SKIP = Status(Code.SKIP)


def raised(exc: BaseException) -> str:
    """`Type: text` of an exception, as Error statuses and fault messages show it."""
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
