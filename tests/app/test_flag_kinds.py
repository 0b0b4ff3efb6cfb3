"""Each flag kind parses as kube-scheduler's flag library parses the same kind."""

from __future__ import annotations

import argparse

import pytest

from scheduler.app.flag_kinds import bool_flag
from scheduler.app.flag_kinds import comma_list
from scheduler.app.flag_kinds import duration_flag
from scheduler.app.flag_kinds import int_list
from scheduler.app.flag_kinds import list_flag
from scheduler.app.flag_kinds import repeatable_flag
from scheduler.app.flag_kinds import text_flag


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(exit_on_error=False)
    group = parser.add_argument_group("kinds")
    text_flag(group, "--text", "FILE", "a file")
    repeatable_flag(group, "--again", "VALUE", "a value")
    list_flag(group, "--items", "some items")
    duration_flag(group, "--wait", 5.0, "a wait")
    duration_flag(group, "--maybe-wait", None, "a wait if given")
    bool_flag(group, "--switch", False, "a switch")
    bool_flag(parser, "--tri-state", None, "a switch that may be unset")
    return parser


def test_defaults_tell_not_given_apart() -> None:
    args = parser().parse_args([])
    assert args.text == ""
    assert args.again is None
    assert args.items is None
    assert args.wait == 5.0
    assert args.maybe_wait is None
    assert args.switch is False
    assert args.tri_state is None


def test_given_values_are_parsed_by_kind() -> None:
    args = parser().parse_args(
        [
            "--text=/tmp/a",
            "--again=1",
            "--again=2",
            "--items=a, b",
            "--items=c",
            "--wait=1m30s",
            "--maybe-wait=2s",
            "--switch",
            "--tri-state=false",
        ]
    )
    assert args.text == "/tmp/a"
    assert args.again == ["1", "2"]
    assert args.items == [["a", "b"], ["c"]]
    assert args.wait == 90.0
    assert args.maybe_wait == 2.0
    assert args.switch is True
    assert args.tri_state is False


def test_bool_help_shows_a_known_default_only() -> None:
    help_by_flag = {a.option_strings[0]: a.help for a in parser()._actions if a.option_strings}
    assert help_by_flag["--switch"] == "a switch (default false)"
    assert help_by_flag["--tri-state"] == "a switch that may be unset"


@pytest.mark.parametrize("argv", [["--switch=maybe"], ["--wait=soon"]])
def test_bad_values_are_refused(argv: list[str]) -> None:
    with pytest.raises(argparse.ArgumentError):
        parser().parse_args(argv)


def test_lists_drop_blanks_and_read_empty_as_none() -> None:
    assert comma_list(" a ,b ") == ["a", "b"]
    assert comma_list("  ") == []
    assert int_list("23, 29") == [23, 29]
    with pytest.raises(argparse.ArgumentTypeError, match="expected comma-separated integers"):
        int_list("23,x")
