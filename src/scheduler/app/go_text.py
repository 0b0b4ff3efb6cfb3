"""Text as kube-scheduler's Go code writes it, where our answers must match it byte for byte,
and reads it, where our flags must take the same spellings."""

from __future__ import annotations

# Go's strconv.ParseBool, which reads bool flags and feature gates: these spellings, no others.
GO_BOOLS = {
    **dict.fromkeys(("1", "t", "T", "TRUE", "true", "True"), True),
    **dict.fromkeys(("0", "f", "F", "FALSE", "false", "False"), False),
}

# strconv.Quote's short escapes; any other unprintable character gets a numeric one.
_SHORT_ESCAPES = {
    "\a": "\\a",
    "\b": "\\b",
    "\f": "\\f",
    "\n": "\\n",
    "\r": "\\r",
    "\t": "\\t",
    "\v": "\\v",
    "\\": "\\\\",
    '"': '\\"',
}


def go_quote(text: str) -> str:
    """`text` as Go's `%q` (strconv.Quote) writes it: double-quoted, printable characters as
    they are, everything else escaped."""
    return '"' + "".join(_quoted_char(char) for char in text) + '"'


def _quoted_char(char: str) -> str:
    if char in _SHORT_ESCAPES:
        return _SHORT_ESCAPES[char]
    if char.isprintable():
        return char
    code = ord(char)
    if code < 0x80:
        return f"\\x{code:02x}"
    if code < 0x10000:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"
