"""The methods each extension point requires of a plugin class, checked before anything runs.

A plugin is enabled at an extension point by the method that names it (`score` for Score,
...). Some points need companions: Score plugins answer `score_extensions()` (None when they
do not normalise), PreFilter plugins `pre_filter_extensions()`, Reserve plugins `unreserve`.
Every method must accept the arguments the scheduler passes, and PreBind, Bind and PostBind
must be coroutines while every other method must not be. Optional batch forms (`filter_nodes`,
`score_nodes`) are checked when present.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Method:
    name: str
    arguments: tuple[str, ...]
    is_async: bool = False

    @property
    def call(self) -> str:
        return f"{self.name}({', '.join(self.arguments)})"


_STATE_POD_NODE = ("state", "pod", "node_name")

REQUIRED: dict[str, tuple[Method, ...]] = {
    "PreEnqueue": (Method("pre_enqueue", ("pod",)),),
    "QueueSort": (Method("less", ("a", "b")),),
    "PreFilter": (
        Method("pre_filter", ("state", "pod", "table")),
        Method("pre_filter_extensions", ()),
    ),
    "Filter": (Method("filter", ("state", "pod", "node_info")),),
    "PostFilter": (Method("post_filter", ("state", "pod", "statuses")),),
    "PreScore": (Method("pre_score", ("state", "pod", "table", "rows")),),
    "Score": (Method("score", ("state", "pod", "node_info")), Method("score_extensions", ())),
    "Reserve": (Method("reserve", _STATE_POD_NODE), Method("unreserve", _STATE_POD_NODE)),
    "Permit": (Method("permit", _STATE_POD_NODE),),
    "PreBind": (Method("pre_bind", _STATE_POD_NODE, is_async=True),),
    "Bind": (Method("bind", _STATE_POD_NODE, is_async=True),),
    "PostBind": (Method("post_bind", _STATE_POD_NODE, is_async=True),),
}

# Checked only when the class defines them.
OPTIONAL: dict[str, tuple[Method, ...]] = {
    "Filter": (Method("filter_nodes", ("state", "pod", "table", "rows")),),
    "Score": (Method("score_nodes", ("state", "pod", "table", "rows")),),
    "PreBind": (Method("pre_bind_pre_flight", _STATE_POD_NODE),),
}
EVENTS_TO_REGISTER = Method("events_to_register", ())
NORMALIZE_SCORE = Method("normalize_score", ("state", "pod", "table", "rows", "scores"))
PRE_FILTER_EXTENSION_METHODS = (
    Method("add_pod", ("state", "pod", "pod_to_add", "node_info")),
    Method("remove_pod", ("state", "pod", "pod_to_remove", "node_info")),
)


def method_problem(owner: object, method: Method) -> str | None:
    """What is wrong with `owner.<method>` (a class or an instance), or None."""
    found = inspect.getattr_static(owner, method.name, None)
    if found is None:
        return f"has no {method.call} method"
    function = getattr(owner, method.name)
    if not callable(function):
        return f"has {method.name}, but it is not a method"
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return None  # builtins and C extensions: nothing to check against
    # Looked up on a class a method still takes `self`; on an instance (or static) it does not.
    takes_self = isinstance(owner, type) and not isinstance(found, (staticmethod, classmethod))
    placeholders = [None] * (len(method.arguments) + (1 if takes_self else 0))
    try:
        signature.bind(*placeholders)
    except TypeError:
        return f"has {method.name}{signature}, but the scheduler calls {method.call}"
    if inspect.iscoroutinefunction(function) != method.is_async:
        wanted = "async def" if method.is_async else "def (not async)"
        return f"must define {method.name} with {wanted}"
    return None


def contract_problems(plugin_class: type, point: str) -> list[str]:
    """Problems with `plugin_class` as a plugin enabled at extension point `point`."""
    problems = []
    for method in REQUIRED.get(point, ()):
        problem = method_problem(plugin_class, method)
        if problem is not None:
            problems.append(f"is enabled at {point} but {problem}")
    for method in OPTIONAL.get(point, ()):
        if inspect.getattr_static(plugin_class, method.name, None) is None:
            continue
        problem = method_problem(plugin_class, method)
        if problem is not None:
            problems.append(problem)
    return problems


def registration_problems(plugin_class: type) -> list[str]:
    """Problems with the optional `events_to_register` (QueueingHints) of a plugin class."""
    if inspect.getattr_static(plugin_class, EVENTS_TO_REGISTER.name, None) is None:
        return []
    problem = method_problem(plugin_class, EVENTS_TO_REGISTER)
    return [] if problem is None else [problem]


def extension_problems(plugin: object, point: str) -> list[str]:
    """Problems with the extension objects a constructed Score or PreFilter plugin returns."""
    methods: tuple[Method, ...]
    if point == "Score":
        getter, methods = "score_extensions", (NORMALIZE_SCORE,)
    elif point == "PreFilter":
        getter, methods = "pre_filter_extensions", PRE_FILTER_EXTENSION_METHODS
    else:
        return []
    extensions = getattr(plugin, getter)()
    if extensions is None:
        return []
    problems = []
    for method in methods:
        problem = method_problem(extensions, method)
        if problem is not None:
            problems.append(f"returns from {getter}() an object that {problem}")
    return problems
