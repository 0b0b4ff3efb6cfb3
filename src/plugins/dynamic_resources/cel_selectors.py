"""CEL device selectors: each expression compiled once and kept, evaluated per device with
the Kubernetes library, with compile and runtime failures reported as errors, never raised.

Kubernetes bounds a selector's length (10 KiB) and its evaluation cost (1,000,000). celpy has
no cost tracking, so the cost is bounded before evaluation from the expression's syntax tree:
every node counts one, and anything under a macro (`all`, `exists`, `map`, `filter`, ...)
counts once per element it could visit, a device holding at most 32 attributes and capacities.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import celpy
from celpy import celparser
from celpy import celtypes
from celpy import evaluation
from lark import Tree

from plugins.dynamic_resources.cel_values import FUNCTIONS
from plugins.dynamic_resources.cel_values import CELValueError
from plugins.dynamic_resources.selector_error import SelectorError

MAX_EXPRESSION_LENGTH = 10 * 1024
MAX_COST = 1_000_000
# A device has at most 32 attributes and capacities together: the most a macro can visit.
MAX_ELEMENTS = 32
_MACROS = frozenset({"all", "exists", "exists_one", "map", "filter"})
CACHE_SIZE = 1024


@dataclass(frozen=True, slots=True)
class CompiledSelector:
    expression: str
    program: Any

    def matches(self, device: Any) -> bool:
        """True or False for one `device` variable; SelectorError on a runtime failure."""
        try:
            result = self.program.evaluate({"device": device})
        except evaluation.CELEvalError as exc:
            raise SelectorError(f"CEL runtime error: {_eval_detail(exc)}") from exc
        except (CELValueError, ArithmeticError, TypeError, ValueError) as exc:
            raise SelectorError(f"CEL runtime error: {exc}") from exc
        if isinstance(result, evaluation.CELEvalError):
            raise SelectorError(f"CEL runtime error: {_eval_detail(result)}")
        if not isinstance(result, bool | celtypes.BoolType):
            raise SelectorError(
                f"CEL result type error: must evaluate to bool, got {type(result).__name__}"
            )
        return bool(result)


def _eval_detail(exc: evaluation.CELEvalError) -> str:
    """celpy's error in the words cel-go (and so Kubernetes) uses, e.g. `no such key: x`."""
    args = exc.args
    if not args:
        return str(exc)
    what = str(args[0])
    member = "no such member in mapping: "
    if what.startswith(member):
        what = "no such key: " + what.removeprefix(member).strip("'")
    if len(args) >= 3 and isinstance(args[2], tuple) and args[2]:
        detail = ", ".join(str(a).strip("'") for a in args[2])
        # celpy files every ValueError a function raises under this heading; the detail is
        # the helper's own message.
        return detail if what == "return error for overflow" else f"{what}: {detail}"
    return what


def estimated_cost(tree: Tree[Any]) -> int:
    """An upper bound of the evaluation cost: nodes, multiplied under macros."""
    cost = 1
    children = [c for c in tree.children if isinstance(c, Tree)]
    macro = tree.data == "member_dot_arg" and any(
        getattr(token, "value", None) in _MACROS for token in tree.children
    )
    inner = sum(estimated_cost(child) for child in children)
    return cost + (inner * MAX_ELEMENTS if macro else inner)


class SelectorCompiler:
    """Compiles expressions once; keeps the most recently used ones."""

    def __init__(self, capacity: int = CACHE_SIZE) -> None:
        # Built at the first compile: building CEL's parser is a noticeable part of a daemon's
        # start-up, and most clusters never hand it a device selector.
        self._env: celpy.Environment | None = None
        self._capacity = capacity
        self._cache: OrderedDict[str, CompiledSelector | SelectorError] = OrderedDict()

    def compile(self, expression: str) -> CompiledSelector:
        """The compiled selector, or SelectorError (remembered too, so a bad expression is not
        parsed again on every node)."""
        found = self._cache.get(expression)
        if found is None:
            found = self._compile(expression)
            self._cache[expression] = found
            if len(self._cache) > self._capacity:
                self._cache.popitem(last=False)
        else:
            self._cache.move_to_end(expression)
        if isinstance(found, SelectorError):
            raise found
        return found

    def _compile(self, expression: str) -> CompiledSelector | SelectorError:
        if len(expression) > MAX_EXPRESSION_LENGTH:
            return SelectorError(
                f"CEL compile error: expression too long ({len(expression)} > "
                f"{MAX_EXPRESSION_LENGTH} characters)"
            )
        if self._env is None:
            self._env = celpy.Environment()
        try:
            tree = self._env.compile(expression)
        except celparser.CELParseError as exc:
            return SelectorError(f"CEL compile error: {str(exc).splitlines()[0]}")
        cost = estimated_cost(tree)
        if cost > MAX_COST:
            return SelectorError(
                "CEL compile error: estimated cost exceeds the limit for device selectors "
                f"({cost} > {MAX_COST})"
            )
        return CompiledSelector(expression, self._env.program(tree, functions=FUNCTIONS))
