"""Plain-spoken errors for a kubeconfig that cannot work, before the loader sees it.

kubernetes_asyncio's loader reports a missing file as "Expected key current-context", an empty
one as a TypeError, and a dangling context name not at all until the first request. These
checks name the file and what is wrong with it, the way `kubectl` users expect to read it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from scheduler.config.yaml_text import safe_load
from scheduler.framework.errors import ConfigError


@dataclass(frozen=True, slots=True)
class Checked:
    """What to hand the loader: the context to use and the files that set anything."""

    context: str
    files: str


def check_kubeconfig(path: str, *, context: str | None, flag: str) -> Checked:
    """Raise ConfigError naming `flag`, the file and the problem, if `path` cannot work.
    `path` may list several files joined by the path separator (from $KUBECONFIG): they are
    merged as kubectl merges them, the first file to set a name or the current-context
    winning, and an empty one setting nothing. The loader merges them too, but lets the last
    current-context win and fails on an empty file, hence `Checked`."""
    where = f"{flag}: {path}"
    listed = path.split(os.pathsep) if os.pathsep in path else [path]
    config: dict[str, Any] = {}
    setting = []
    for file in listed:
        read = _read(file, f"{flag}: {file}", allow_empty=len(listed) > 1)
        if read:
            setting.append(file)
        _merge(config, read)
    chosen = context or config.get("current-context") or ""
    if not chosen:
        raise ConfigError(
            f"{where}: sets no current-context (choose one with `kubectl config use-context NAME`)"
        )
    entry = _named(config, "contexts", "context", chosen, where)
    for key in ("cluster", "user"):
        name = str(entry.get(key) or "")
        if not name:
            raise ConfigError(f'{where}: context "{chosen}" names no {key}')
        if key == "cluster":
            cluster = _named(config, "clusters", "cluster", name, where)
            if not cluster.get("server"):
                raise ConfigError(f'{where}: cluster "{name}" has no server')
        else:
            _named(config, "users", "user", name, where)
    return Checked(str(chosen), os.pathsep.join(setting))


def _read(path: str, where: str, *, allow_empty: bool) -> dict[str, Any]:
    file = Path(path)
    if not file.exists():
        raise ConfigError(f"{where}: no such file")
    if file.is_dir():
        raise ConfigError(f"{where}: is a directory, not a kubeconfig file")
    try:
        text = file.read_text()
    except OSError as error:
        raise ConfigError(f"{where}: cannot be read: {error.strerror}") from error
    try:
        config = safe_load(text)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        raise ConfigError(f"{where}: not valid YAML{at}") from error
    if config is None and allow_empty:
        # kubectl reads an empty file among several as one that sets nothing.
        return {}
    if config is None:
        raise ConfigError(f"{where}: is empty")
    if not isinstance(config, dict):
        raise ConfigError(f"{where}: is not a kubeconfig (expected a YAML mapping)")
    return config


def _merge(into: dict[str, Any], config: dict[str, Any]) -> None:
    """Add what `config` sets that `into` does not yet: kubectl's first-wins merge."""
    if not into.get("current-context") and config.get("current-context"):
        into["current-context"] = config["current-context"]
    for section in ("contexts", "clusters", "users"):
        known = into.setdefault(section, [])
        names = {item.get("name") for item in known if isinstance(item, dict)}
        for item in config.get(section) or ():
            if isinstance(item, dict) and item.get("name") not in names:
                known.append(item)
                names.add(item.get("name"))


def _named(config: dict[str, Any], section: str, key: str, name: str, where: str) -> dict[str, Any]:
    for item in config.get(section) or ():
        if isinstance(item, dict) and item.get("name") == name:
            value = item.get(key)
            return value if isinstance(value, dict) else {}
    raise ConfigError(f'{where}: {key} "{name}" is not in the file\'s {section}')
