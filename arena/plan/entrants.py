"""Bots named on the command line (``arena play``, ``sprt``, ``openings``): a built-in
bot's name or a command, and the name each plays under.

The same lookups as a tournament file's (:mod:`arena.plan.builtins`,
:func:`arena.plan.programs.find_program`), with the command-line phrasing of
their errors; and the one place that starts a command bot to learn its name,
since a command line (``python3 mybot.py``) says little of who the bot is.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

import msgspec

from arena.engine.bot import Engine
from arena.engine.errors import EngineError
from arena.plan.builtins import builtin_names, resolve_builtin
from arena.plan.config import NAME_RE, BotConfig
from arena.plan.launch import engine_config
from arena.plan.prepare import prepare
from arena.plan.programs import find_program
from arena.protocol.text import visible


class EntrantError(ValueError):
    """A bot named on the command line that cannot be run; one line."""


@dataclass(frozen=True, slots=True)
class Entrant:
    """A bot from the command line: ``name`` is the built-in's own, or a placeholder
    (the program's stem) until the bot's ``identity`` names it."""

    name: str
    command: list[str]
    builtin: bool


def entrant(spec: str, seed: int | None = None) -> Entrant:
    """A built-in bot name (``random`` or ``builtin:random``, given ``--seed seed``) or
    a command line, whose program must exist (on the ``PATH``, or as a path
    relative to the current folder)."""
    name = spec.removeprefix("builtin:")
    if name in builtin_names():
        command = resolve_builtin(name)
        if seed is not None:
            command += ["--seed", str(seed)]
        return Entrant(name, command, True)
    try:
        command = shlex.split(spec)
    except ValueError as exc:
        raise EntrantError(f"bot command {spec!r}: {exc}") from None
    if not command:
        raise EntrantError("empty bot command")
    exe = command[0]
    if find_program(exe, [Path.cwd()], None) is None:
        raise EntrantError(f"bot {spec!r}: executable {exe!r} not found")
    return Entrant(Path(exe).stem, command, False)


def playing_name(name: str) -> str:
    """A name a bot chose, made a valid tournament name (``plain c/2`` -> ``plain-c-2``);
    empty if nothing of it is left."""
    wanted = re.sub(r"[^A-Za-z0-9_.+\-]", "-", name)[:64].lstrip("-.+_")
    return wanted if NAME_RE.match(wanted) else ""


def shown_name(name: str) -> str:
    """A bot's self-chosen name as the terminal may show it: control characters as
    escapes (a name could hold escape sequences), at most 64 characters."""
    return visible(name[:64]) + ("..." if len(name) > 64 else "")


def distinct(names: Sequence[str]) -> list[str]:
    """Two players of one name become ``NAME-1`` and ``NAME-2``."""
    if len(names) == 2 and names[0] == names[1]:
        return [f"{names[0]}-1", f"{names[1]}-2"]
    return list(names)


async def identity_name(bot: Entrant, game: str, variant: str) -> str:
    """The name a tournament enters a command bot under: its ``identity`` name made
    valid (:func:`playing_name`), learnt by starting it once, confined as a tournament
    file's defaults confine it. A built-in (or a bot that does not answer ``hello``, or
    whose name leaves nothing) keeps its name."""
    if bot.builtin:
        return bot.name
    name = bot.name
    async with Engine(engine_config(BotConfig(name=bot.name, command=bot.command))) as engine:
        with suppress(EngineError):  # no answer: the placeholder stands
            name = (await engine.start(game, variant, check_identity=False)).name
    return playing_name(name) or bot.name


async def start_named(
    engines: Sequence[Engine], bots: Sequence[Entrant], game: str, variant: str
) -> None:
    """Start the command bots of a game among ``engines``, to name each after its
    ``identity`` (as the terminal may show it) before the game announces them.

    Each is started once: the game goes on with the running process, and a bot
    whose start failed keeps that fault for the game (the referee does not start
    it again when told ``restart=False``). Built-in bots keep their names and are
    started by the referee.
    """
    for engine, bot in zip(engines, bots, strict=True):
        if bot.builtin:
            await prepare(bot.name)  # the arena's own bot: named so, never by its path
            continue
        try:
            ident = await engine.start(game, variant)
        except EngineError:
            continue
        engine.config = msgspec.structs.replace(engine.config, name=shown_name(ident.name))
    names = distinct([engine.name for engine in engines])
    for engine, name in zip(engines, names, strict=True):
        if engine.name != name:
            engine.config = msgspec.structs.replace(engine.config, name=name)


__all__ = [
    "Entrant",
    "EntrantError",
    "distinct",
    "entrant",
    "identity_name",
    "playing_name",
    "shown_name",
    "start_named",
]
