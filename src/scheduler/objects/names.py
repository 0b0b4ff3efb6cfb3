"""Whether a string is a qualified name (`[prefix/]name`, as label keys and resource names are),
in the API server's own words, so every configuration error about a name reads the same.

The rules and messages are apimachinery's `IsQualifiedName` and `IsDNS1123Subdomain`: the name
part is at most 63 characters of `[-A-Za-z0-9_.]` starting and ending alphanumeric; the optional
prefix is a lowercase DNS subdomain of at most 253 characters. An empty name part is reported
both as empty and as not matching the pattern, as upstream reports it.
"""

from __future__ import annotations

import re
from typing import Final

_NAME_MAX: Final = 63
_PREFIX_MAX: Final = 253
_NAME_PATTERN: Final = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_PREFIX_PATTERN: Final = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
# Matched whole (fullmatch): `$` would also accept a value ending in a newline, which Go's
# anchored patterns refuse.
_NAME: Final = re.compile(_NAME_PATTERN)
_PREFIX: Final = re.compile(_PREFIX_PATTERN)

NAME_RULE: Final = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    f"validation is '{_NAME_PATTERN}')"
)
SUBDOMAIN_RULE: Final = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    f"for validation is '{_PREFIX_PATTERN}')"
)


def qualified_name_problems(value: str) -> list[str]:
    """What is wrong with `value` as `[prefix/]name`; empty when it is valid."""
    parts = value.split("/")
    if len(parts) > 2:
        # In v1.36 apimachinery's IsQualifiedName is IsLabelKey, which words it this way.
        return [
            f"a valid label key {NAME_RULE} with an optional DNS subdomain prefix and '/' "
            "(e.g. 'example.com/MyName')"
        ]
    problems: list[str] = []
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            problems.append("prefix part must be non-empty")
        else:
            problems.extend(f"prefix part {problem}" for problem in subdomain_problems(prefix))
    if not name:
        problems.append("name part must be non-empty")
    elif len(name) > _NAME_MAX:
        problems.append(f"name part must be no more than {_NAME_MAX} characters")
    if not _NAME.fullmatch(name):
        problems.append(f"name part {NAME_RULE}")
    return problems


def subdomain_problems(value: str) -> list[str]:
    """What is wrong with `value` as a lowercase RFC 1123 subdomain; empty when it is valid."""
    return _length_and_pattern_problems(value, _PREFIX_MAX, _PREFIX, SUBDOMAIN_RULE)


def _length_and_pattern_problems(
    value: str, limit: int, pattern: re.Pattern[str], rule: str
) -> list[str]:
    problems = []
    if len(value) > limit:
        problems.append(f"must be no more than {limit} characters")
    if not pattern.fullmatch(value):
        problems.append(rule)
    return problems


_LABEL_VALUE_PATTERN: Final = f"({_NAME_PATTERN})?"
_LABEL_VALUE: Final = re.compile(_LABEL_VALUE_PATTERN)
LABEL_VALUE_RULE: Final = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    f"'my_value',  or '12345', regex used for validation is '{_LABEL_VALUE_PATTERN}')"
)


def label_value_problems(value: str) -> list[str]:
    """What is wrong with `value` as a label value (apimachinery's IsValidLabelValue); empty
    when it is valid."""
    return _length_and_pattern_problems(value, _NAME_MAX, _LABEL_VALUE, LABEL_VALUE_RULE)
