"""The metric names a PromQL expression reads, for checking dashboards against /metrics.

Not a PromQL parser: it removes what cannot be a metric name (strings, label matchers, range
and subquery brackets, grouping clauses, dashboard variables, numbers) and keeps the
identifiers that are not function calls or keywords. That covers the expressions dashboards
are made of; an expression it cannot read fails the check loudly rather than passing.
"""

from __future__ import annotations

import re

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'')
_VARIABLE = re.compile(r"\$\{[^}]*\}|\$\w+")
_MATCHERS = re.compile(r"\{[^{}]*\}")
_BRACKETS = re.compile(r"\[[^\[\]]*\]")
_GROUPING = re.compile(
    r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^()]*\)", re.IGNORECASE
)
# Numbers, durations (5m, 1h30m) and scientific notation.
_NUMBER = re.compile(r"(?<![A-Za-z0-9_:])\d[A-Za-z0-9_.+]*")
_IDENTIFIER = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*(\s*\()?")
_KEYWORDS = frozenset(
    {"and", "or", "unless", "bool", "offset", "inf", "nan", "atan2", "group_left", "group_right"}
)
_LABEL_VALUES = re.compile(r"^\s*label_values\((?P<expr>.+),\s*\w+\s*\)\s*$")


def metric_names(expr: str) -> set[str]:
    text = _STRING.sub(" ", expr)
    text = _VARIABLE.sub(" ", text)
    text = _MATCHERS.sub(" ", text)
    text = _BRACKETS.sub(" ", text)
    text = _GROUPING.sub(" ", text)
    text = _NUMBER.sub(" ", text)
    names = set()
    for match in _IDENTIFIER.finditer(text):
        if match.group(1):  # a function call
            continue
        name = match.group(0)
        if name.lower() not in _KEYWORDS:
            names.add(name)
    return names


def template_query_names(query: str) -> set[str]:
    """A Grafana variable query: `label_values(<expr>, label)`, or a plain expression."""
    matched = _LABEL_VALUES.match(query)
    return metric_names(matched.group("expr") if matched else query)
