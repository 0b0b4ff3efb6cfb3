"""The command line read as kube-scheduler's (pflag and cobra) reads it, before argparse.

Three rules argparse does not have:
- `_` in a flag name is `-` (cliflag's WordSepNormalizeFunc): `--leader_elect=false`;
- a bool flag takes its value only after `=`: `--leader-elect false` is the flag alone (true)
  and a stray word `false`, not the flag set to false;
- the daemon takes no positional arguments, and says so in cobra's words.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence

from scheduler.app.flag_kinds import flag_bool


def dashed_flag_names(words: Sequence[str]) -> list[str]:
    """`--a_b=c` as `--a-b=c`. Values, and words after `--`, stay."""
    normalized: list[str] = []
    for index, word in enumerate(words):
        if word == "--":
            return normalized + list(words[index:])
        if word.startswith("--"):
            name, equals, value = word.partition("=")
            normalized.append(name.replace("_", "-") + equals + value)
        else:
            normalized.append(word)
    return normalized


def bools_stand_alone(words: Sequence[str], command: argparse.ArgumentParser) -> list[str]:
    """A bool flag of `command` given without `=value` is `=true`, so argparse does not take
    the next word as its value."""
    bools = {
        option
        for action in command._actions
        if action.type is flag_bool
        for option in action.option_strings
    }
    rewritten: list[str] = []
    for index, word in enumerate(words):
        if word == "--":
            return rewritten + list(words[index:])
        rewritten.append(f"{word}=true" if word in bools else word)
    return rewritten


def unparsed(command: str, extras: Sequence[str]) -> str:
    """What is wrong with the words no flag or argument took: pflag's text for an unknown
    flag, cobra's for a word given to the daemon, which takes none."""
    flags = [word for word in extras if word.startswith("-") and word != "-"]
    if flags:
        name = flags[0].partition("=")[0]
        if name.startswith("--"):
            return f"unknown flag: {name}"
        return f"unknown shorthand flag: '{name[1:2]}' in {flags[0]}"
    if command == "run":
        # Go's %q of a []string: each word quoted, space-separated, in brackets.
        quoted = " ".join(json.dumps(word, ensure_ascii=False) for word in extras)
        return f'"kube-pyscheduler run" does not take any arguments, got [{quoted}]'
    return f"unrecognized arguments: {' '.join(extras)}"
