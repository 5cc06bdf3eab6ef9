"""The pre-flight: every entrant started once, at once, before a tournament's first game.

A bot that cannot start in this environment (a JVM that cannot reserve its
heap, a missing script, a folder its user cannot read) would otherwise lose
every game it is scheduled for, as faults that say little and stay in the
ratings for good. So before the first game of a run, and again at every resume,
each entrant is started exactly as its games would start it (the same
:func:`~arena.plan.launch.entry_config`: sandbox, limits, user, cwd, env)
and asked for its ``identity``; then it is told to quit. All of them start
together in one trio nursery, so the whole check costs about one bot's start,
and it runs in the arena's own process whichever backend plays the games (the
bots' folders and sandbox are this machine's). A remote entrant is waited for
until it connects (``[remote] connect_timeout``); one that does not is an
entrant that cannot start.

What the pre-flight finds is a value (:class:`Preflight`); the tournament
decides what to do with it (stop the run, or skip the broken entrants' games).
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import trio

from arena.engine.bot import Engine
from arena.engine.errors import EngineError
from arena.engine.gateway import Gateway
from arena.engine.options import OptionError, check_options
from arena.engine.remote import RemoteEngine
from arena.plan.config import TournamentConfig
from arena.plan.launch import entry_config
from arena.protocol.messages import PROTOCOL_VERSION, Identity
from arena.protocol.text import visible

OUTPUT_CHARS = 600
"""At most this much of a broken entrant's output goes into its one line."""


@dataclass(frozen=True, slots=True)
class Started:
    """One entrant's pre-flight: its identity, or why it could not give one."""

    name: str
    identity: Identity | None = None
    cause: str = ""
    """``exited with code 1``, ``no answer within 10.000 s``...: empty when it answered."""
    output: str = ""
    """The head and tail of what it wrote (stderr, and stray stdout lines), escaped."""
    option_error: str = ""
    """Its ``options`` do not fit what it declares: the operator's mistake, not the bot's."""

    @property
    def broken(self) -> bool:
        return self.identity is None

    def line(self) -> str:
        """The entrant's fault in one line: the cause, then what it wrote, joined."""
        words = " | ".join(s for s in (x.strip() for x in self.output.splitlines()) if s)
        if len(words) > OUTPUT_CHARS:
            words = words[: OUTPUT_CHARS // 2] + " [...] " + words[-OUTPUT_CHARS // 2 :]
        said = f"; it wrote: {words}" if words else "; it wrote nothing"
        return visible(f"{self.name}: did not start: {self.cause}{said}")


@dataclass(frozen=True, slots=True)
class Preflight:
    """Every entrant's pre-flight, in the tournament file's order, and its cost."""

    started: list[Started]
    seconds: float = 0.0
    warnings: list[str] = field(default_factory=list)
    """One line each: entrants that are different programs but give one identity name."""

    @property
    def broken(self) -> list[Started]:
        return [s for s in self.started if s.broken]


class BrokenEntrants(Exception):
    """Entrants that cannot start: the run stops before its first game.

    ``lines`` holds one line per broken entrant (its cause and what it wrote);
    ``str()`` is the summary line the CLI ends with.
    """

    def __init__(self, broken: list[Started]) -> None:
        names = ", ".join(s.name for s in broken)
        super().__init__(
            f"{len(broken)} {'entrant' if len(broken) == 1 else 'entrants'} cannot start "
            f"({visible(names)}); no game was played. Fix them, or run with --skip-broken "
            "to play the others (their games are then not played, not lost)"
        )
        self.broken = broken
        self.lines = [s.line() for s in broken]


def _silent(line: str) -> None:
    pass


async def _start_one(
    config: TournamentConfig,
    name: str,
    game: str,
    gateway: Gateway | None = None,
    say: Callable[[str], None] = _silent,
) -> Started:
    cfg = entry_config(config, name)
    variant = config.variant
    engine: Engine | RemoteEngine
    if config.bot(name).remote:  # waits up to connect_timeout for arena connect
        if gateway is None:
            return Started(name, cause="a remote entrant needs the gateway (arena run --web)")
        engine = RemoteEngine(cfg, gateway, config.remote.connect_timeout)
    else:
        engine = Engine(cfg)
    async with engine:
        try:
            ident = await engine.start(game, variant, check_identity=False)
        except EngineError as exc:
            return Started(name, cause=exc.detail, output=exc.stderr_tail)
        if isinstance(engine, RemoteEngine):
            link = engine.link
            rtt = link.rtt_ms if link is not None else None
            trip = f", round trip {rtt:.1f} ms" if rtt is not None else ""
            say(visible(f"remote entrant {name} is here: {ident.name!r}{trip}"))
        cause = ""
        if ident.protocol != PROTOCOL_VERSION:
            cause = f"speaks protocol version {ident.protocol}, arena speaks {PROTOCOL_VERSION}"
        elif not ident.supports(game, variant):
            cause = f"does not support {game}/{variant} (it declared {ident.games})"
        if cause:
            return Started(name, cause=visible(cause), output=engine.stderr_tail())
        problem = ""
        if cfg.options:
            try:
                check_options(ident.declared_options, cfg.options, bot=name)
            except OptionError as exc:
                problem = str(exc)
        return Started(name, identity=ident, option_error=problem)


def _program(config: TournamentConfig, name: str) -> tuple[str, ...]:
    """What makes an entry's program: its folder and the files its command names
    (``python3 bot.py`` in two folders are two programs; ``bot --seed 1`` and
    ``bot --seed 2`` in one folder are one)."""
    bot = config.bot(name)
    if bot.remote:  # a program on its author's machine, its own
        return ("remote", name)
    base = Path(bot.cwd) if bot.cwd else None
    files = [bot.argv[0]]
    for word in bot.argv[1:]:
        path = Path(word) if base is None or Path(word).is_absolute() else base / word
        try:
            if path.is_file():
                files.append(str(path.resolve()))
        except OSError:
            continue
    return (bot.cwd or "", *files)


def identity_warnings(config: TournamentConfig, started: list[Started]) -> list[str]:
    """One line per identity name that different programs of this tournament give.

    The rating list merges every game of one identity (``name version``) across
    tournaments into one player: two students who kept the protocol example's
    name would become one player there without a word.
    """
    by_name: dict[str, list[str]] = {}
    for s in started:
        if s.identity is not None:
            by_name.setdefault(" ".join(s.identity.name.split()), []).append(s.name)
    out = []
    for ident, names in by_name.items():
        programs = {_program(config, n) for n in names}
        if len(names) > 1 and len(programs) > 1:
            listed = ", ".join(shlex.quote(n) for n in names)
            out.append(
                visible(
                    f"warning: entries {listed} are different programs but all call "
                    f"themselves {ident!r}: the rating list would merge them into one "
                    "player across tournaments (give each its own identity name)"
                )
            )
    return out


async def preflight(
    config: TournamentConfig,
    game: str,
    gateway: Gateway | None = None,
    say: Callable[[str], None] = _silent,
) -> Preflight:
    """Start every entrant of ``config`` at once and shake hands with each (a remote
    one once it connects through ``gateway``, within ``[remote] connect_timeout``).

    ``say`` hears what the operator would otherwise wonder about during a wait of
    up to ``connect_timeout``: which remote entrants the run waits for, and each
    one as it arrives."""
    results: dict[str, Started] = {}
    absent = [b.name for b in config.bots if b.remote and gateway and not gateway.current(b.name)]
    if absent:
        many = "entrant" if len(absent) == 1 else "entrants"
        say(
            visible(
                f"waiting up to {config.remote.connect_timeout:g} s for {len(absent)} remote "
                f"{many} to connect: {', '.join(absent)}"
            )
        )

    async def one(name: str) -> None:
        results[name] = await _start_one(config, name, game, gateway, say)

    begun = time.perf_counter()
    async with trio.open_nursery() as nursery:
        for bot in config.bots:
            nursery.start_soon(one, bot.name)
    started = [results[bot.name] for bot in config.bots]
    seconds = time.perf_counter() - begun
    return Preflight(started, seconds, identity_warnings(config, started))


__all__ = ["BrokenEntrants", "Preflight", "Started", "identity_warnings", "preflight"]
