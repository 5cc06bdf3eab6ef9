"""A small SDK for bot authors writing in Python: the protocol loop, done once.

A bot is a function from a decoded :class:`Request` to an action::

    from arena.protocol.sdk import run

    def choose(request):
        return request.legal[0]

    run(choose, name="first-legal", author="me")

``run`` answers the handshake, ``newgame``, ``ping`` and ``quit``; it calls
``choose`` for every ``go`` and writes its answer. ``choose`` may also return
``(action, info)`` where ``info`` is a dict of ``depth``/``score``/``pv``/
``nodes`` (or a Monte-Carlo bot's ``playouts``)/``text``, sent as an ``info``
line before the action. For a richer
bot, subclass :class:`Bot` and override ``choose`` (and ``new_game``/
``game_over`` if it keeps state between decisions).

Diagnostics go to stderr: stdout belongs to the protocol.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from arena.games import State, get_game
from arena.protocol.messages import (
    PROTOCOL_VERSION,
    Action,
    ClockInfo,
    GameOver,
    Go,
    Hello,
    Identity,
    Info,
    NewGame,
    OptionSpec,
    OptionValue,
    Ping,
    Pong,
    ProtocolError,
    Quit,
    Ready,
    SetOption,
    decode_arena_message,
    encode_line,
)


@dataclass(slots=True)
class Request:
    """One decision the arena asks for, with everything the bot may know."""

    id: int
    game: str
    variant: str
    player: int
    position: str
    observation: dict[str, Any]
    history: list[str]
    legal: list[str]
    clock: ClockInfo
    received_at: float
    options: dict[str, OptionValue] = field(default_factory=dict)
    """The bot's option values (defaults, then whatever ``setoption`` set)."""

    def state(self) -> State:
        """The rules-core state of ``position`` (from this player's point of view)."""
        return get_game(self.game).state_from_text(self.position)

    def time_budget(self, fraction: float = 0.05, reserve: float = 0.05) -> float:
        """Seconds a bot may sensibly think now: a share of its remaining time.

        Uses the fixed move time when there is one; keeps ``reserve`` seconds
        for the pipe and the bot's own start-up jitter. Measured from when the
        request was read, so time spent decoding counts.
        """
        clock = self.clock
        if clock.movetime_ms is not None:
            budget = clock.movetime_ms / 1000
        else:
            moves = clock.moves_to_go or 20
            budget = clock.budget_ms / 1000 / moves * (1 + 20 * fraction) / 2
            budget += clock.increment_ms / 1000 * 0.8
            budget = min(budget, clock.budget_ms / 1000 * 0.5)
        return max(0.0, budget - reserve)

    def deadline(self, fraction: float = 0.05, reserve: float = 0.05) -> float:
        """``time.monotonic()`` value by which to answer."""
        return self.received_at + self.time_budget(fraction, reserve)


Choice = str | tuple[str, dict[str, Any]]


class Bot:
    """Base class for bots that keep state between decisions."""

    name = "bot"
    author = ""
    version = ""
    games: Sequence[str] = ("kamisado",)
    options: Sequence[OptionSpec] = ()
    """Engine options to declare in ``identity`` (protocol.md 2.1)."""

    def set_option(self, name: str, value: OptionValue) -> None:
        """Called for each ``setoption`` (before a ``newgame``); the value is kept
        for :meth:`option_values`. Override to act on it at once."""
        self.__dict__.setdefault("_settings", {})[name] = value

    def option_values(self) -> dict[str, OptionValue]:
        """Every declared option: its default, or the value ``setoption`` gave it."""
        values = {o.name: o.default for o in self.options if o.default is not None}
        settings: dict[str, OptionValue] = self.__dict__.get("_settings", {})
        return values | settings

    def games_for(self, offered: str) -> Sequence[str]:
        """The ``games`` of the ``identity`` answering a ``hello`` that offers the game
        ``offered``: :attr:`games`. A bot that only chooses among ``legal`` plays any
        game, so it may answer with the offered one (the built-in ``random`` does)."""
        return self.games

    def new_game(self, message: NewGame) -> None:
        """Called before the first decision of every game."""

    def choose(self, request: Request) -> Choice:
        raise NotImplementedError

    def game_over(self, message: GameOver) -> None:
        """Called when the arena reports the end of a game."""


class _FunctionBot(Bot):
    def __init__(self, choose: Callable[[Request], Choice], **identity: Any) -> None:
        self._choose = choose
        for key, value in identity.items():
            setattr(self, key, value)

    def choose(self, request: Request) -> Choice:
        return self._choose(request)


def log(*parts: object) -> None:
    """Write a diagnostic line to stderr (stdout is reserved for the protocol)."""
    print(*parts, file=sys.stderr, flush=True)


def serve(bot: Bot, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> int:
    """Run the protocol loop until ``quit`` or end of input; return an exit code."""
    stdin = stdin or sys.stdin.buffer
    stdout = stdout or sys.stdout.buffer
    game = variant = ""

    def send(msg: Any) -> None:
        stdout.write(encode_line(msg))
        stdout.flush()

    for line in stdin:
        received = time.monotonic()
        if not line.strip():
            continue
        try:
            msg = decode_arena_message(line)
        except ProtocolError as exc:
            log(f"{bot.name}: ignoring a message: {exc}")
            continue
        if isinstance(msg, Hello):
            game, variant = msg.game, msg.variant
            send(
                Identity(
                    id=msg.id,
                    protocol=PROTOCOL_VERSION,
                    name=bot.name,
                    author=bot.author,
                    version=bot.version,
                    games=list(bot.games_for(msg.game)),
                    options=list(bot.options) or None,
                )
            )
        elif isinstance(msg, SetOption):
            bot.set_option(msg.name, msg.value)
        elif isinstance(msg, NewGame):
            game, variant = msg.game, msg.variant
            bot.new_game(msg)
            send(Ready(id=msg.id))
        elif isinstance(msg, Go):
            request = Request(
                id=msg.id,
                game=game,
                variant=variant,
                player=msg.player,
                position=msg.position,
                observation=msg.observation,
                history=msg.history,
                legal=msg.legal,
                clock=msg.clock,
                received_at=received,
                options=bot.option_values(),
            )
            choice = bot.choose(request)
            if isinstance(choice, tuple):
                action, info = choice
                send(Info(id=msg.id, **info))
            else:
                action = choice
            send(Action(id=msg.id, action=action))
        elif isinstance(msg, Ping):
            send(Pong(id=msg.id))
        elif isinstance(msg, GameOver):
            bot.game_over(msg)
        elif isinstance(msg, Quit):
            return 0
    return 0


def run(
    choose: Callable[[Request], Choice] | Bot,
    *,
    name: str = "bot",
    author: str = "",
    version: str = "",
    games: Sequence[str] = ("kamisado",),
    options: Sequence[OptionSpec] = (),
) -> None:
    """Serve ``choose`` (a function or a :class:`Bot`) on stdin/stdout and exit.

    A function bot reads its option values from ``request.options``.
    """
    bot = (
        choose
        if isinstance(choose, Bot)
        else _FunctionBot(
            choose, name=name, author=author, version=version, games=games, options=options
        )
    )
    try:
        code = serve(bot)
    except (BrokenPipeError, KeyboardInterrupt):
        code = 0
    sys.exit(code)
