"""`simulate --output FORMAT [FILE]`: the report's format, and the file the HTML page goes to."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

FORMATS = ("table", "json", "yaml", "html")
# The formats written to a file named after them; the others go to standard output.
TO_FILE = ("html",)


@dataclass(frozen=True, slots=True)
class OutputChoice:
    format: str = "table"
    file: Path | None = None
    # Scenario files given after the option's own words (see OutputFormat).
    inputs: tuple[Path, ...] = field(default=())

    @classmethod
    def parse(cls, words: Sequence[str]) -> OutputChoice:
        if not words or words[0] not in FORMATS:
            given = repr(words[0]) if words else "nothing"
            raise ValueError(f"invalid format {given} (choose from {', '.join(FORMATS)})")
        format_, rest = words[0], words[1:]
        if format_ not in TO_FILE:
            return cls(format_, None, tuple(Path(w) for w in rest))
        if not rest:
            raise ValueError(f"{format_}: a FILE to write the page to is required")
        return cls(format_, Path(rest[0]), tuple(Path(w) for w in rest[1:]))


class OutputFormat(argparse.Action):
    """Takes FORMAT and, for html, FILE. argparse hands every following word to this option,
    so any after those are scenario files: `--output html r.html a.yaml` still reads a.yaml."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: str | Sequence[Any] | None,
        option_string: str | None = None,
    ) -> None:
        words = [values] if isinstance(values, str) else [str(v) for v in values or ()]
        try:
            setattr(namespace, self.dest, OutputChoice.parse(words))
        except ValueError as exc:
            parser.error(f"argument --output: {exc}")
