"""The error of a CEL device selector, apart from CEL itself: code that only handles selector
errors need not import the CEL library (a twentieth of the daemon's start-up)."""

from __future__ import annotations


class SelectorError(Exception):
    """A selector that cannot be compiled or evaluated; the text is upstream's detail."""
