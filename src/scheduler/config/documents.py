"""Reading YAML and JSON documents from files nobody has checked, within fixed bounds.

Configurations and simulation scenarios come from users, so their reader must answer every
input quickly with a ConfigError naming the file and, where known, the line and column:

- bytes that are not UTF-8 are reported at their position;
- nesting deeper than MAX_DEPTH is refused while parsing, before anything recurses over it
  (the YAML composer and everything after it recurse once per level);
- aliases may add at most MAX_ALIAS_NODES nodes to a file, so an alias bomb ("billion laughs")
  is refused at the alias that crosses the bound instead of being expanded later by whoever
  walks the data; an alias inside the node it names (a cycle) is refused too;
- repeated mapping keys are refused, as upstream's strict decoding does;
- values the YAML constructor cannot build (`!!int abc`) are reported with their position
  instead of escaping as Python errors.

Scalars and keys are read by upstream's rules (`yaml_rules`), not PyYAML's: `yes` and `y` are
true, `1:30` and `2024-01-01` are strings, `1e2` is a number, and a key `1` is the string "1".
"""

from __future__ import annotations

import json
from collections.abc import Hashable
from pathlib import Path
from typing import Any

import yaml
from yaml.composer import ComposerError
from yaml.constructor import ConstructorError

from scheduler.config.yaml_rules import GoConstructor
from scheduler.config.yaml_rules import GoResolver
from scheduler.config.yaml_rules import json_key
from scheduler.framework.errors import ConfigError

# No Kubernetes object or configuration comes near this; Python's stack does at about 300.
MAX_DEPTH = 100
# Nodes that aliases may add to one file, counting an alias as the whole subtree it repeats.
MAX_ALIAS_NODES = 100_000

_COLLECTION_STARTS = (yaml.SequenceStartEvent, yaml.MappingStartEvent)


class _BoundExceeded(yaml.MarkedYAMLError):
    """Valid YAML past one of this reader's bounds."""

    def __init__(self, problem: str, mark: yaml.Mark) -> None:
        super().__init__(problem=problem, problem_mark=mark)


class _BoundedLoader(GoConstructor, GoResolver, yaml.SafeLoader):
    """SafeLoader with upstream's scalar rules that counts depth and alias expansion while
    composing, and refuses repeated keys while constructing."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._alias_nodes = 0
        # Size of every finished node with aliases expanded, by id (nodes outlive the pass).
        self._sizes: dict[int, int] = {}

    def fetch_flow_collection_start(self, token_class: type[yaml.Token]) -> None:
        # Checked in the scanner too: it keeps one possible key per open `[` or `{` and walks
        # them all on every token, so 2,000 open brackets would take seconds to reach the
        # composer's check.
        if self.flow_level >= MAX_DEPTH:
            raise _BoundExceeded(f"nested deeper than {MAX_DEPTH} levels", self.get_mark())
        super().fetch_flow_collection_start(token_class)

    def compose_document(self) -> yaml.Node | None:
        # Ids of the previous document's nodes may be reused once they are freed.
        self._sizes = {}
        node: yaml.Node | None = super().compose_document()
        return node

    def _next_event(self) -> Any:
        return self.peek_event()  # type: ignore[no-untyped-call]

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        if self.check_event(yaml.AliasEvent):
            return self._compose_alias(parent, index)
        collection = self.check_event(*_COLLECTION_STARTS)
        if collection:
            self._depth += 1
            if self._depth > MAX_DEPTH:
                mark = self._next_event().start_mark
                raise _BoundExceeded(f"nested deeper than {MAX_DEPTH} levels", mark)
        node = super().compose_node(parent, index)
        if collection:
            self._depth -= 1
        size = 1
        for child in _children(node):
            size += self._sizes[id(child)]
        self._sizes[id(node)] = size
        return node

    def _compose_alias(self, parent: yaml.Node | None, index: Any) -> yaml.Node | None:
        event = self._next_event()
        target = self.anchors.get(event.anchor) if event.anchor is not None else None
        if target is not None:
            size = self._sizes.get(id(target))
            if size is None:
                raise ComposerError(
                    None,
                    None,
                    f"alias *{event.anchor} refers to a node that contains it",
                    event.start_mark,
                )
            self._alias_nodes += size
            if self._alias_nodes > MAX_ALIAS_NODES:
                problem = f"aliases expand to more than {MAX_ALIAS_NODES} nodes"
                raise _BoundExceeded(problem, event.start_mark)
        return super().compose_node(parent, index)

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep=deep)
        except yaml.YAMLError:
            raise
        except (ValueError, TypeError, ArithmeticError) as error:
            raise ConstructorError(
                None, None, f"cannot read this value: {error}", node.start_mark
            ) from error


def _children(node: yaml.Node | None) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _construct_mapping(loader: _BoundedLoader, node: yaml.MappingNode) -> dict[str, Any]:
    loader.flatten_mapping(node)
    mapping: dict[str, Any] = {}
    for key_node, value_node in node.value:
        constructed = loader.construct_object(key_node, deep=True)
        if not isinstance(constructed, Hashable):
            raise ConstructorError(
                "while constructing a mapping",
                node.start_mark,
                "found an unhashable key",
                key_node.start_mark,
            )
        # Keys are strings in JSON, as upstream decodes them: `1:` is "1", `yes:` is "true".
        key = json_key(constructed)
        if key is None:
            raise ConstructorError(
                "while constructing a mapping",
                node.start_mark,
                "found a null key",
                key_node.start_mark,
            )
        if key in mapping:
            raise ConstructorError(
                "while constructing a mapping",
                node.start_mark,
                f"found duplicate key {key!r}",
                key_node.start_mark,
            )
        mapping[key] = loader.construct_object(value_node, deep=True)
    return mapping


_BoundedLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def read_text(path: str | Path) -> str:
    """The file's text; unreadable files and bytes that are not UTF-8 are ConfigErrors."""
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise ConfigError(f"{path}: cannot read: {error.strerror or error}") from error
    return decode(data, str(path))


def decode(data: bytes, source: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        column = error.start - (data.rfind(b"\n", 0, error.start) + 1) + 1
        raise ConfigError(
            f"{source}:{line}:{column}: not valid UTF-8 (byte 0x{data[error.start]:02x})"
        ) from error


def load_yaml_documents(text: str, source: str) -> list[Any]:
    """Every document of a YAML stream."""
    try:
        loader = _BoundedLoader(text)  # reading starts here: a bad character fails at once
    except yaml.YAMLError as error:
        raise ConfigError(_yaml_problem(error, text, source)) from error
    try:
        documents = []
        while loader.check_data():  # type: ignore[no-untyped-call]
            documents.append(loader.get_data())
        return documents
    except yaml.YAMLError as error:
        raise ConfigError(_yaml_problem(error, text, source)) from error
    except RecursionError as error:  # merge keys chained thousands deep, for instance
        raise ConfigError(f"{source}: nested too deeply") from error
    finally:
        loader.dispose()


def load_yaml_or_json(text: str, source: str) -> Any:
    """One document: JSON when the text starts with `{`, else YAML (a single document).

    Empty documents after the first (a trailing `---`, comments) are allowed. A second document
    with content is refused: upstream reads the first document and silently ignores the rest,
    and configuration that is silently ignored is a mistake waiting to happen.
    """
    if text.lstrip().startswith("{"):
        return _load_json(text, source)
    documents = load_yaml_documents(text, source)
    while len(documents) > 1 and documents[-1] is None:
        documents.pop()
    if len(documents) > 1:
        raise ConfigError(
            f"{source}: holds {len(documents)} YAML documents; a configuration file holds one "
            "(kube-scheduler would read the first and ignore the others)"
        )
    return documents[0] if documents else None


def _load_json(text: str, source: str) -> Any:
    try:
        data = json.loads(text, object_pairs_hook=_unique_keys)
    except json.JSONDecodeError as error:
        raise ConfigError(
            f"{source}:{error.lineno}:{error.colno}: not valid JSON: {error.msg}"
        ) from error
    except RecursionError as error:
        raise ConfigError(f"{source}: nested deeper than {MAX_DEPTH} levels") from error
    except ValueError as error:  # duplicate keys, integers beyond Python's digit limit
        raise ConfigError(f"{source}: {error}") from error
    if _depth(data) > MAX_DEPTH:
        raise ConfigError(f"{source}: nested deeper than {MAX_DEPTH} levels")
    return data


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"found duplicate key {key!r}")
        result[key] = value
    return result


def _depth(value: Any) -> int:
    """Nesting depth of decoded JSON, without recursing."""
    deepest = 0
    stack = [(value, 0)]
    while stack:
        item, level = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            deepest = max(deepest, level + 1)
            stack.extend((child, level + 1) for child in item)
    return deepest


def _yaml_problem(error: yaml.YAMLError, text: str, source: str) -> str:
    if isinstance(error, yaml.MarkedYAMLError):
        mark = error.problem_mark or error.context_mark
        where = f"{source}:{mark.line + 1}:{mark.column + 1}" if mark else source
        problem = error.problem or error.context or "invalid YAML"
        if isinstance(error, _BoundExceeded):
            return f"{where}: {problem}"
        return f"{where}: not valid YAML: {problem}"
    if isinstance(error, yaml.reader.ReaderError):
        # Characters YAML does not allow (control characters, for instance).
        line = text.count("\n", 0, error.position) + 1
        column = error.position - (text.rfind("\n", 0, error.position) + 1) + 1
        code = error.character if isinstance(error.character, int) else ord(error.character)
        problem = f"character U+{code:04X} is not allowed"
        return f"{source}:{line}:{column}: not valid YAML: {problem}"
    return f"{source}: {error}"
