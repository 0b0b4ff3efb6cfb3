"""Whether a topology key is a valid label key (a qualified name), in the API's words."""

from __future__ import annotations

import re
from typing import Final

_NAME_MAX: Final = 63
_PREFIX_MAX: Final = 253
_NAME_PATTERN: Final = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_PREFIX_PATTERN: Final = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
_NAME: Final = re.compile(f"^{_NAME_PATTERN}$")
_PREFIX: Final = re.compile(f"^{_PREFIX_PATTERN}$")

_NAME_RULE: Final = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    f"validation is '{_NAME_PATTERN}')"
)
_PREFIX_RULE: Final = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    f"for validation is '{_PREFIX_PATTERN}')"
)


def label_key_problems(key: str) -> list[str]:
    """What is wrong with `key` as `[prefix/]name`; empty when it is valid."""
    parts = key.split("/")
    if len(parts) > 2:
        return [
            f"a qualified name {_NAME_RULE} with an optional DNS subdomain prefix and '/' "
            "(e.g. 'example.com/MyName')"
        ]
    problems: list[str] = []
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            problems.append("prefix part must be non-empty")
        else:
            if len(prefix) > _PREFIX_MAX:
                problems.append(f"prefix part must be no more than {_PREFIX_MAX} characters")
            if not _PREFIX.match(prefix):
                problems.append(f"prefix part {_PREFIX_RULE}")
    if not name:
        problems.append("name part must be non-empty")
    elif len(name) > _NAME_MAX:
        problems.append(f"name part must be no more than {_NAME_MAX} characters")
    # An empty name fails the pattern too, and upstream reports both.
    if not _NAME.match(name):
        problems.append(f"name part {_NAME_RULE}")
    return problems
