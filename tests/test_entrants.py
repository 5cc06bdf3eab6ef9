"""Bots named on the command line (``arena/plan/entrants.py``): built-in names or
commands, and the names they play under."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import trio

from arena.plan.builtins import resolve_builtin
from arena.plan.entrants import EntrantError, distinct, entrant, identity_name, playing_name

AUTHOR_BOT = str(Path(__file__).with_name("author_bot.py"))


def test_a_built_in_name_or_a_command() -> None:
    bot = entrant("builtin:random", 3)
    assert (bot.name, bot.builtin) == ("random", True)
    assert bot.command == [*resolve_builtin("random"), "--seed", "3"]
    bot = entrant(f"{sys.executable} {AUTHOR_BOT} --name x", 3)  # a command takes no seed
    assert (bot.name, bot.builtin) == (Path(sys.executable).stem, False)
    assert bot.command == [sys.executable, AUTHOR_BOT, "--name", "x"]
    with pytest.raises(EntrantError, match="executable '/no/such/bot' not found"):
        entrant("/no/such/bot")
    with pytest.raises(EntrantError, match="No closing quotation"):
        entrant("python3 'unclosed")


def test_a_command_bot_is_named_by_its_identity_for_sprt_too() -> None:
    bot = entrant(f"{sys.executable} {AUTHOR_BOT} --name 'plain c/2'")
    assert bot.name != "plain-c-2"
    assert trio.run(identity_name, bot, "kamisado", "standard") == "plain-c-2"
    assert trio.run(identity_name, entrant("random", 1), "kamisado", "standard") == "random"


def test_names_made_valid_and_told_apart() -> None:
    assert playing_name("plain c/2") == "plain-c-2"
    assert playing_name("///") == ""
    assert distinct(["random", "random"]) == ["random-1", "random-2"]
    assert distinct(["a", "b"]) == ["a", "b"]
