"""Every flag of `run` with its value, written as kube-scheduler's flag library writes it, for
`/flagz`.

pflag prints a flag's value through the flag's own type: `true`, `15s`, `[a,b]`, `A=true`. Our
flags parse into Python values instead, and several keep None for "not given" so that the
configuration file can win over them; for those, what kube-scheduler shows when the flag is not
given is listed in `_NOT_GIVEN` (its defaults, as its `/flagz` prints them).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from pathlib import Path
from typing import Any
from typing import Final

from scheduler.app.flag_kinds import duration_seconds
from scheduler.framework.durations import format_duration

_NOT_GIVEN: Final = {
    "leader-elect": "true",
    "leader-elect-lease-duration": "15s",
    "leader-elect-renew-deadline": "10s",
    "leader-elect-retry-period": "2s",
    "leader-elect-resource-lock": "leases",
    "leader-elect-resource-name": "kube-scheduler",
    "leader-elect-resource-namespace": "kube-system",
    "kube-api-qps": "50",
    "kube-api-burst": "100",
    "kube-api-content-type": "application/vnd.kubernetes.protobuf",
    "profiling": "true",
    "contention-profiling": "true",
    "pod-max-in-unschedulable-pods-duration": "5m0s",
    "authorization-always-allow-paths": "[/healthz,/readyz,/livez]",
    "requestheader-username-headers": "[x-remote-user]",
    "requestheader-group-headers": "[x-remote-group]",
    "requestheader-extra-headers-prefix": "[x-remote-extra-]",
}

# Flags whose value pflag prints as a map (`Name=true,Other=false`) rather than a list.
_MAPS: Final = frozenset({"feature-gates"})

# Flags that are lists, shown `[]` when not given.
_LIST_ACTIONS: Final = (argparse._AppendAction,)


def flag_values(parser: argparse.ArgumentParser, args: argparse.Namespace) -> dict[str, str]:
    """{flag name without dashes: value as pflag writes it}, sorted by name."""
    values: dict[str, str] = {}
    for action in parser._actions:
        names = [option for option in action.option_strings if option.startswith("--")]
        if not names:
            continue
        name = names[0].removeprefix("--")
        if isinstance(action, argparse._HelpAction):
            values[name] = "false"
            continue
        values[name] = _shown(name, action, getattr(args, action.dest, None))
    return dict(sorted(values.items()))


def _shown(name: str, action: argparse.Action, value: Any) -> str:
    if value is None:
        if name in _NOT_GIVEN:
            return _NOT_GIVEN[name]
        return "[]" if isinstance(action, _LIST_ACTIONS) and name not in _MAPS else ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        items = [str(item) for item in _flattened(value)]
        if name in _MAPS:
            return _map_text(items)
        return f"[{','.join(items)}]"
    if isinstance(value, float):
        if action.type is duration_seconds or name.endswith(("-timeout", "-duration")):
            return format_duration(value)
        return f"{value:g}"
    if isinstance(value, Path):
        return str(value)
    return str(value)


def _map_text(uses: list[str]) -> str:
    """pflag's map of bools: every `key=value` of every use, the last one winning, by key."""
    pairs: dict[str, str] = {}
    for use in uses:
        for item in use.split(","):
            key, _, setting = item.strip().partition("=")
            if key:
                pairs[key.strip()] = setting.strip().lower()
    return ",".join(f"{key}={pairs[key]}" for key in sorted(pairs))


def _flattened(values: Iterable[Any]) -> Iterable[Any]:
    # A comma list that may be repeated parses into one list per use.
    for value in values:
        if isinstance(value, list):
            yield from value
        else:
            yield value
