"""The kinds of flag kube-scheduler's flag library (pflag) has, declared on argparse.

kube-scheduler's flags are spelled in a few shapes: a string that is empty unless given, a
string that may be repeated, a comma-separated list that may be repeated, a Go duration and a
bool that may stand alone. Declaring each flag through its kind keeps the shapes (and their
parsing) the same across every group of flags.
"""

from __future__ import annotations

import argparse
import ipaddress
from pathlib import Path

from scheduler.app.go_text import GO_BOOLS
from scheduler.app.go_text import go_quote
from scheduler.config import parse_duration
from scheduler.framework.errors import ConfigError

# What flags are added to: the parser itself or one of its groups.
FlagGroup = argparse._ActionsContainer


def comma_list(text: str) -> list[str]:
    """A pflag string slice: comma-separated, surrounding blanks dropped, "" is no items."""
    return [item.strip() for item in text.split(",")] if text.strip() else []


def int_list(text: str) -> list[int]:
    try:
        return [int(item) for item in comma_list(text)]
    except ValueError as error:
        raise argparse.ArgumentTypeError(f"expected comma-separated integers: {error}") from None


def duration_seconds(text: str) -> float:
    try:
        return parse_duration(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from error


def flag_duration(flag: str, text: str) -> float:
    """A Go duration given to `flag` and read once the flags are parsed, in seconds; a bad one
    is a ConfigError naming the flag."""
    try:
        return parse_duration(text)
    except ValueError as error:
        raise ConfigError(f"{flag}: {error}") from error


def optional_path(text: str) -> Path | None:
    """A file flag: pflag keeps an empty value as "", which kube-scheduler reads as not given."""
    return Path(text) if text else None


def ip_text(text: str) -> str:
    """pflag's IP flag: an IP address, surrounding blanks dropped; "" leaves the default."""
    address = text.strip()
    if address:
        try:
            ipaddress.ip_address(address)
        except ValueError:
            raise argparse.ArgumentTypeError(f"failed to parse IP: {go_quote(text)}") from None
    return address


def verbosity_level(text: str) -> int:
    """klog's -v: an unsigned integer."""
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected a non-negative integer, got {text!r}")
    return value


def flag_bool(text: str) -> bool:
    """A bool flag's value as pflag reads it (strconv.ParseBool): `yes` or `TrUe` is refused,
    as kube-scheduler refuses it."""
    value = GO_BOOLS.get(text)
    if value is None:
        spellings = ", ".join(GO_BOOLS)
        raise argparse.ArgumentTypeError(f"expected one of {spellings}; got {go_quote(text)}")
    return value


def text_flag(group: FlagGroup, flag: str, metavar: str, help_text: str) -> None:
    """A string flag that is "" unless given."""
    group.add_argument(flag, default="", metavar=metavar, help=help_text)


def repeatable_flag(group: FlagGroup, flag: str, metavar: str, help_text: str) -> None:
    """A string flag that may be given several times: the values in order, None if never."""
    group.add_argument(flag, action="append", metavar=metavar, help=help_text)


def list_flag(group: FlagGroup, flag: str, help_text: str, *, metavar: str = "LIST") -> None:
    """A comma-separated list that may be repeated: one list per use, None if never given."""
    group.add_argument(
        flag, type=comma_list, action="append", default=None, metavar=metavar, help=help_text
    )


def duration_flag(group: FlagGroup, flag: str, default: float | None, help_text: str) -> None:
    """A Go duration ("1m30s"), in seconds."""
    group.add_argument(
        flag, type=duration_seconds, default=default, metavar="DURATION", help=help_text
    )


def bool_flag(group: FlagGroup, flag: str, default: bool | None, help_text: str) -> None:
    """A pflag-style bool: `--flag` alone means true, else `--flag=true|false`. A default of
    None tells "not given" apart from "given as false"."""
    shown = f" (default {str(default).lower()})" if default is not None else ""
    group.add_argument(
        flag,
        type=flag_bool,
        nargs="?",
        const=True,
        default=default,
        metavar="BOOL",
        help=f"{help_text}{shown}",
    )
