"""Checks that a bot speaks the protocol before it is entered in a tournament.

In the spirit of fastchess's compliance checker: a bot author runs
``arena check-bot -- COMMAND...`` and gets one line per check, each passed or
failed with the reason, instead of discovering in a tournament that the bot
loses every game on a protocol fault. The checks drive the bot through the
real :class:`~arena.engine.bot.Engine`, so they see exactly what a tournament sees
(``arena check-bot --listen``: the same checks on the
:class:`~arena.engine.remote.RemoteEngine` a real ``arena connect`` brings,
``compliance_remote.py``):

* ``start``: the process starts and answers ``hello`` within the timeout;
* ``identity``, ``protocol version``, ``supports game``: the handshake's content;
* ``ping``: ``pong`` with the right id;
* ``newgame``: ``ready``;
* ``go: ...``: decisions in chosen positions, each answered with a legal
  action: the start position, the second player's first move, and the game's
  own tricky cases (``Game.check_cases``: for Kamisado a position with a Sumo
  push among the legal actions, a pending regroup choice (``left``/``right``)
  and a marathon match well advanced, with a long history and high Sumo ranks);
* ``options`` (only for a bot that declares engine options): the declarations
  are coherent and every sample value (default, bounds, each choice) is taken
  with a ``setoption`` before a ``newgame`` that is answered;
* ``games: VARIANT vs OPPONENT`` (``games > 0``): whole games in every declared
  variant against ``random`` and the game's strongest built-in bot, seats alternating
  (``arena/tools/compliance_games.py``), reporting the first fault with its position;
* ``gameover``: the notification (sent after every ``go`` check's game) is
  accepted silently (no unsolicited line, no exit), which a ``ping`` right
  after each one proves;
* ``quit``: the bot exits by itself, with status 0, within the quit timeout
  (a SKIP over the gateway: only the author's machine sees the exit).

A failed check does not stop the later ones: a faulted bot is killed (as the
engine always does) and restarted for the next check. Only a bot that cannot be
started at all fails everything after ``start``.

Without ``--game`` the checks run for each game the bot declares in its
``identity`` (:func:`choose_games` asks it first): an author of a Sekigahara-only
bot should not have to know that the arena's first game is Kamisado.
"""

from __future__ import annotations

import functools
import shlex
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import msgspec
import trio

from arena.engine.bot import Engine
from arena.engine.config import EngineConfig
from arena.engine.errors import EngineError
from arena.engine.options import check_declaration, describe, sample_values
from arena.engine.remote import RemoteEngine
from arena.engine.sandbox import SandboxSettings
from arena.games import CheckCase, Game, State, game_names, get_game
from arena.games.base import advance_to_decision
from arena.match.clock import Clock, TimeControl
from arena.match.wire import clock_info
from arena.plan.builtins import builtin_names, resolve_builtin
from arena.plan.config import BotConfig, Limits, ProtocolSettings
from arena.plan.launch import engine_config
from arena.plan.prepare import prepare
from arena.plan.programs import program_command
from arena.protocol.messages import (
    PROTOCOL_VERSION,
    Action,
    GameOver,
    Go,
    Identity,
    NewGame,
    SetOption,
)
from arena.tools.compliance_games import STAGE_TC, Check, play_stage

QUIT_TIMEOUT = 1.0
"""What protocol.md promises a bot for leaving after ``quit``."""


@dataclass(frozen=True, slots=True)
class Decision:
    """A decision to ask for: ``state`` has its decider to move, in ``variant``."""

    name: str
    state: State
    variant: str


def _case(game: Game, case: CheckCase, seed: int) -> Decision:
    """The decision ``case`` describes, checked to be what its name claims."""
    if case.position is None:
        state = game.random_decision(case.variant, case.plies, seed)
        if state is None:
            raise RuntimeError(f"{game.name}/{case.variant} offers no decision at all")
    else:
        state = game.state_from_text(case.position)
        legal = state.legal_actions()
        if case.offers is not None and (case.offers not in legal or len(legal) < 2):
            raise RuntimeError(f"{case.position!r} no longer offers {case.offers!r} ({case.name})")
    return Decision(f"go: {case.name}", state, case.variant)


def decisions(game: Game, variant: str | None = None) -> list[Decision]:
    """The decisions a bot must get right, the game's own tricky cases included;
    the start position and the second player's first decision in ``variant``
    (default: the game's default variant)."""
    variant = variant or game.default_variant
    start = game.new_state(variant)
    second = advance_to_decision(start.clone())
    if second is not None:
        second.apply_action(second.legal_actions()[0])
        second = advance_to_decision(second)
    out = [Decision("go: start position", start, variant)]
    if second is not None and second.current_player() != start.current_player():
        out.append(Decision("go: second player", second, variant))
    out += [_case(game, case, 2026) for case in game.check_cases()]
    return out


class _Session:
    """The bot under test, restarted after any fault so later checks still run: a
    local :class:`Engine`, or a remote one that only talks (``compliance_remote``)."""

    def __init__(self, engine: Engine | RemoteEngine, game: Game, timeout: float) -> None:
        self.engine = engine
        self.game = game
        self.timeout = timeout
        self.variant = game.default_variant
        """The variant the checks play: the game's default, unless the bot declares
        other variants only, then the first of those (a bot that plays single
        rounds only is never offered a standard match)."""
        self.start_error: str | None = None
        self.gameover_error: str | None = None
        """The first fault seen right after a ``gameover``, for the ``gameover`` check."""

    async def ensure_running(self) -> str | None:
        """``None`` when the bot runs (restarting it if needed), else why it cannot."""
        if self.engine.running:
            return None
        if self.start_error is not None:
            # Retrying a bot that failed its first handshake could cost the whole
            # timeout per check; one verdict is enough.
            return "not run: the bot did not start (see 'start')"
        try:
            await self.engine.stop(graceful=False)
            await self.engine.start(self.game.name, self.variant, check_identity=False)
        except EngineError as exc:
            return f"not run: the bot could not be restarted ({_fault(exc)})"
        return None

    async def new_game(self, state: State, variant: str) -> None:
        player = state.current_player()
        await self.engine.new_game(
            NewGame(
                game=self.game.name,
                variant=variant,
                player=player,
                players=["checker", self.engine.name][:: 1 if player == 1 else -1],
                position=state.observation_text(player),
                time_control=str(self._control()),
            ),
            timeout=self.timeout,
        )

    def _control(self) -> TimeControl:
        return TimeControl(base=self.timeout)

    async def game_over(self, message: GameOver) -> str | None:
        """Send ``gameover`` and prove with a ``ping`` that the bot took it silently.

        A bot that answers a notification, or exits on it, would spoil its next
        game; blaming that game's check would mislead, so the fault is kept for
        the ``gameover`` check (and the bot restarted for the next one).
        """
        await self.engine.notify(message)
        try:
            await self.engine.ping(timeout=self.timeout)
        except EngineError as exc:
            error = f"after gameover, ping failed: {_fault(exc)}"
            self.gameover_error = self.gameover_error or error
            return error
        return None

    async def decide(self, decision: Decision) -> Check:
        """``newgame``, one ``go`` and a ``gameover``; passed if the answer is legal."""
        if (why := await self.ensure_running()) is not None:
            return Check(decision.name, False, why)
        ident = self.engine.identity
        if ident is not None and not ident.supports(self.game.name, decision.variant):
            # A tournament never offers an undeclared variant: nothing to check.
            declared = ", ".join(ident.games) or "none"
            return Check(
                decision.name,
                True,
                f"{self.game.name}/{decision.variant} is not declared (games: {declared})",
                skipped=True,
            )
        state = decision.state
        player = state.current_player()
        legal = state.legal_actions()
        clock = Clock(self._control())
        try:
            await self.new_game(state, decision.variant)
            reply = await self.engine.go(
                Go(
                    player=player,
                    position=state.observation_text(player),
                    observation=state.observation(player),
                    history=state.history(player),
                    legal=legal,
                    clock=clock_info((clock, clock), player),
                ),
                timeout=clock.budget(player),
            )
        except EngineError as exc:
            return _failed(decision.name, exc)
        answer = reply.answer
        assert isinstance(answer, Action)
        if answer.action in legal:
            await self.game_over(GameOver(result="1/2-1/2", reason="adjudicated"))
        else:
            await self.engine.stop(graceful=False)  # out of step: start afresh
            shown = " ".join(legal) if len(legal) <= 12 else " ".join(legal[:12]) + " ..."
            return Check(
                decision.name,
                False,
                f"illegal action {answer.action!r}; legal were: {shown}",
            )
        return Check(
            decision.name,
            True,
            f"answered {answer.action!r} in {reply.elapsed_ms} ms "
            f"({len(legal)} legal, {len(state.history(player))} actions of history)",
        )


def _failed(name: str, exc: EngineError) -> Check:
    """A failed check for a fault: as the record shows it, with what the bot wrote."""
    return Check(name, False, f"{exc.reason}: {exc.detail}", output=exc.stderr_tail)


def _fault(exc: EngineError) -> str:
    """A fault as the record would show it, with the bot's last stderr line (for a
    verdict that quotes it in passing; :func:`_failed` shows the whole output)."""
    text = f"{exc.reason}: {exc.detail}"
    last = exc.stderr_tail.strip().splitlines()[-1:] if exc.stderr_tail else []
    if last:
        text += f" (last stderr line: {last[0][:200]})"
    return text


async def check_bot(
    command: list[str],
    *,
    game: str = "kamisado",
    timeout: float = 5.0,
    games: int = 0,
    tc: str = STAGE_TC,
    limits: Limits | None = None,
    sandbox: SandboxSettings | None = None,
    cwd: str | None = None,
    entry: EngineConfig | None = None,
    builtin: str | None = None,
) -> list[Check]:
    """Run every compliance check against the bot started by ``command``.

    ``timeout`` bounds each answer (the handshake, ``newgame``, ``ping``) and is
    the whole clock the bot sees in each ``go``. ``games`` whole games per
    declared variant and opponent follow, at time control ``tc``. Never raises
    for a bot fault: each one becomes a failed :class:`Check`. Raises
    ``GameError`` for an unknown ``game``. ``limits`` and ``sandbox`` (a
    tournament file's ``[limits]`` and ``[sandbox]``, their defaults when left
    out) confine the bot and its opponents as a tournament would; ``cwd`` is the
    folder it starts in. ``entry``: a tournament entry's engine configuration,
    used as it is for the bot instead (its command, folder, environment, grants,
    limits and sandbox; ``arena check-bot --from``). ``builtin``: the name
    of the built-in bot it starts, if it is one (prepared first).
    """
    rules = get_game(game)
    config = _config(command, timeout, limits, sandbox, cwd, entry)
    await prepare(builtin)
    async with Engine(config) as engine:
        return await conversation_checks(
            engine, rules, timeout=timeout, games=games, tc=tc, limits=limits, sandbox=sandbox
        )


async def conversation_checks(
    engine: Engine | RemoteEngine,
    rules: Game,
    *,
    timeout: float,
    games: int,
    tc: str,
    limits: Limits | None = None,
    sandbox: SandboxSettings | None = None,
) -> list[Check]:
    """Every check that only talks to the bot, then ``quit``: on its exit status
    for a local :class:`Engine`; a remote bot's exit is seen by ``arena connect``
    on its author's machine only, so there it is a SKIP that says so."""
    checks: list[Check] = []
    session = _Session(engine, rules, timeout)
    checks += await _handshake(session)
    checks.append(await _ping(session))
    checks.append(await _newgame(session))
    for decision in decisions(rules, session.variant):
        checks.append(await session.decide(decision))
    if engine.identity is not None and engine.identity.options:
        checks.append(await _options(session))
    if games > 0:
        checks += await _games(session, games, tc, limits, sandbox)
    checks.append(await _gameover(session))
    if isinstance(engine, Engine):
        checks.append(await _quit(session, engine))
    else:
        why = (
            "not run over the gateway: the bot's exit status is seen by arena connect "
            "on its own machine (arena check-bot -- COMMAND there checks it)"
        )
        checks.append(Check("quit", True, why, skipped=True))
    return checks


def _config(
    command: list[str],
    timeout: float,
    limits: Limits | None,
    sandbox: SandboxSettings | None,
    cwd: str | None,
    entry: EngineConfig | None = None,
) -> EngineConfig:
    if entry is None:  # else started as its tournament starts it
        bot = BotConfig(name=Path(command[0]).name if command else "bot", command=command, cwd=cwd)
        protocol = ProtocolSettings(handshake_timeout=timeout)
        entry = engine_config(bot, limits=limits, sandbox=sandbox, protocol=protocol)
    # stopped as the checks stop it
    return msgspec.structs.replace(entry, quit_timeout=QUIT_TIMEOUT, term_timeout=0.5)


async def _handshake(session: _Session) -> list[Check]:
    engine, game = session.engine, session.game
    t0 = trio.current_time()
    try:
        ident = await engine.start(game.name, game.default_variant, check_identity=False)
    except EngineError as exc:
        session.start_error = _fault(exc)
        why = "not run: no identity"
        return [
            _failed("start", exc),
            Check("identity", False, why),
            Check("protocol version", False, why),
            Check(f"supports {game.name}", False, why),
        ]
    ms = round((trio.current_time() - t0) * 1000)
    if isinstance(engine, Engine):
        # Named by its identity from now on, as in every game record of the stage
        # (a remote bot keeps its entry name: the gateway knows it by that).
        engine.config = msgspec.structs.replace(engine.config, name=ident.name)
    missing = [f for f in ("author", "version") if not getattr(ident, f)]
    # Quoted, not repr'd: the decoder already showed control characters as escapes,
    # which repr would double.
    identity = ", ".join(
        f"{field} {_quoted(getattr(ident, field))}" for field in ("name", "author", "version")
    )
    if missing:
        identity += f" ({' and '.join(missing)} empty: optional, but reports show them)"
    version_ok = ident.protocol == PROTOCOL_VERSION
    variants = [v for v in game.variants if ident.supports(game.name, v)]
    supports = bool(variants)
    if variants and game.default_variant not in variants:
        session.variant = variants[0]
    others = [g for g in known_games(ident.games) if g != game.name]
    hint = f" (it declares {' and '.join(others)}: check with --game {others[0]})" if others else ""
    played = (
        f" (checked in {game.name}/{session.variant})"
        if supports and session.variant != game.default_variant
        else ""
    )
    return [
        Check("start", True, f"started and answered hello in {ms} ms"),
        Check("identity", True, identity),
        Check(
            "protocol version",
            version_ok,
            f"speaks version {ident.protocol}"
            + ("" if version_ok else f", the arena speaks {PROTOCOL_VERSION}"),
        ),
        Check(
            f"supports {game.name}",
            supports,
            f"declared games {ident.games}"
            + (
                played
                if supports
                else f": {game.name!r} missing, so it would never be offered it{hint}"
            ),
        ),
    ]


def _quoted(text: str | None) -> str:
    return "None" if text is None else f"'{text}'"


async def _options(session: _Session) -> Check:
    """Each declared option, set to each sample value, then a ``newgame`` that the
    bot must answer: a bot that chokes on its own declaration fails here."""
    ident = session.engine.identity
    assert ident is not None and ident.options
    for spec in ident.options:
        if (why := check_declaration(spec)) is not None:
            return Check("options", False, why)
    start = session.game.new_state(session.variant)
    tried = 0
    for spec in ident.options:
        for value in sample_values(spec):
            if (why := await session.ensure_running()) is not None:
                return Check("options", False, why)
            session.engine.use_options([SetOption(name=spec.name, value=value)])
            try:
                await session.new_game(start, session.variant)
            except EngineError as exc:
                return Check(
                    "options", False, f"after setoption {spec.name}={value!r}: {_fault(exc)}"
                )
            finally:
                session.engine.use_options([])
            tried += 1
    names = ", ".join(f"{o.name} ({describe(o)})" for o in ident.options)
    return Check("options", True, f"{names}: {tried} values set, each followed by ready")


async def _games(
    session: _Session,
    games: int,
    tc: str,
    limits: Limits | None,
    sandbox: SandboxSettings | None,
) -> list[Check]:
    """The whole-game stage in every variant the bot declares (``compliance_games``)."""
    if (why := await session.ensure_running()) is not None:
        return [Check("games", False, why)]
    ident = session.engine.identity
    rules = session.game
    variants = [v for v in rules.variants if ident is not None and ident.supports(rules.name, v)]
    if not variants:
        return [Check("games", False, f"not run: the bot declares no variant of {rules.name}")]
    return await play_stage(
        session.engine, rules, variants, games=games, tc=tc, limits=limits, sandbox=sandbox
    )


async def _ping(session: _Session) -> Check:
    if (why := await session.ensure_running()) is not None:
        return Check("ping", False, why)
    try:
        rtt = await session.engine.ping(timeout=session.timeout)
    except EngineError as exc:
        return _failed("ping", exc)
    return Check("ping", True, f"pong in {rtt * 1000:.1f} ms")


async def _newgame(session: _Session) -> Check:
    if (why := await session.ensure_running()) is not None:
        return Check("newgame", False, why)
    state = session.game.new_state(session.variant)
    try:
        await session.new_game(state, session.variant)
    except EngineError as exc:
        return _failed("newgame", exc)
    return Check("newgame", True, "ready")


async def _gameover(session: _Session) -> Check:
    """After ``gameover`` the bot must stay, say nothing, and answer the next request."""
    if (why := await session.ensure_running()) is not None:
        return Check("gameover", False, why)
    error = await session.game_over(GameOver(result="1-0", reason="home-row", winner=0))
    if session.gameover_error is not None:
        return Check("gameover", False, session.gameover_error)
    assert error is None
    return Check("gameover", True, "accepted silently every time; the next ping was answered")


async def _quit(session: _Session, engine: Engine) -> Check:
    """``quit`` must end the process by itself: no signal, status 0, within the timeout."""
    if (why := await session.ensure_running()) is not None:
        return Check("quit", False, why)
    t0 = trio.current_time()
    await engine.stop(graceful=True)
    took = trio.current_time() - t0
    rc = engine.returncode
    if took >= QUIT_TIMEOUT:
        how = "was killed" if rc is None or rc != 0 else "exited only after SIGTERM"
        return Check(
            "quit", False, f"still running {QUIT_TIMEOUT:g} s after quit; {how} (status {rc})"
        )
    if rc != 0:
        return Check("quit", False, f"exited with status {rc} after quit, expected 0")
    return Check("quit", True, f"exited with status 0 in {took * 1000:.0f} ms")


def known_games(declared: Sequence[str]) -> list[str]:
    """The arena's games among a bot's ``games`` entries (``kamisado/marathon`` counts
    as ``kamisado``), in the bot's order, each once."""
    names = (entry.split("/", 1)[0] for entry in declared)
    return list(dict.fromkeys(n for n in names if n in game_names()))


@dataclass(frozen=True, slots=True)
class GameChoice:
    """Which games to check, and the line that says why (``arena check-bot`` prints it)."""

    games: list[str]
    why: list[str]


async def choose_games(
    command: list[str],
    *,
    timeout: float = 5.0,
    limits: Limits | None = None,
    sandbox: SandboxSettings | None = None,
    cwd: str | None = None,
    entry: EngineConfig | None = None,
    builtin: str | None = None,
) -> GameChoice:
    """The games the bot declares, from one handshake (it is then told to quit).

    The ``hello`` has to offer some game; it offers the arena's first, which a bot
    answers with its ``identity`` whatever it plays (protocol.md §2). A bot that
    gives no usable identity, or declares no game the arena knows, is checked for
    that first game, whose ``start`` or ``supports`` check then says what is wrong.
    """
    first = game_names()[0]
    config = _config(command, timeout, limits, sandbox, cwd, entry)
    await prepare(builtin)
    async with Engine(config) as engine:
        rules = get_game(first)
        try:
            ident = await engine.start(rules.name, rules.default_variant, check_identity=False)
        except EngineError:
            return GameChoice([first], [f"{first}: the bot gave no identity to choose by"])
        await engine.stop(graceful=True)
    return choice_for(ident)


def choice_for(ident: Identity) -> GameChoice:
    """The games to check for a bot that gave ``ident``, each with why."""
    first = game_names()[0]
    known = known_games(ident.games)
    declared = f"games {list(ident.games)}"
    if not known:
        return GameChoice(
            [first], [f"{first}: the bot declares no game the arena knows ({declared})"]
        )
    if len(known) == 1:
        return GameChoice(
            known, [f"{known[0]}, the game the bot declares ({declared}; --game G for another)"]
        )
    return GameChoice(
        known,
        [
            f"{g}, game {i} of the {len(known)} the bot declares ({declared})"
            for i, g in enumerate(known, 1)
        ],
    )


def builtin_name(command: Sequence[str]) -> str | None:
    """The built-in bot a one-word command names (``builtin:NAME`` or ``NAME``), else ``None``."""
    if len(command) != 1:
        return None
    name = command[0].removeprefix("builtin:")
    return name if name in builtin_names() else None


def run_checks(
    command: Sequence[str],
    *,
    game: str | None = None,
    timeout: float = 5.0,
    games: int = 0,
    tc: str = STAGE_TC,
    echo: Callable[[str], None] = print,
    limits: Limits | None = None,
    sandbox: SandboxSettings | None = None,
    entry: EngineConfig | None = None,
    builtin: str | None = None,
) -> int:
    """Synchronous entry point for ``arena check-bot``: print which game is checked
    and why, one line per check and a summary; return the exit status (0 when every
    check passed, else 1). ``game`` ``None`` checks every game the bot declares.

    ``command`` is given as typed in the current folder (``python3 mybot.py``):
    its relative paths are made absolute and the bot starts in its program's
    folder, as ``arena play`` and a tournament entry without ``cwd`` start it. One
    word ``builtin:NAME`` (or a built-in's bare name, as ``arena play`` takes it)
    checks that built-in bot, the only way to name one. With ``entry`` (a
    tournament entry, already resolved), ``command`` is not read, and ``builtin``
    names the entry's built-in bot, if it is one.
    """
    started = time.monotonic()
    if entry is not None:
        argv, cwd = list(entry.command), entry.cwd
        command = argv
    else:
        builtin = builtin_name(command)
        typed = resolve_builtin(builtin) if builtin is not None else list(command)
        argv, cwd = program_command(typed, Path.cwd())
    if game is None:
        choice = trio.run(
            lambda: choose_games(
                argv,
                timeout=timeout,
                limits=limits,
                sandbox=sandbox,
                cwd=cwd,
                entry=entry,
                builtin=builtin,
            )
        )
    else:
        choice = GameChoice([game], [f"{game}, as --game says"])
    failed: list[str] = []
    total = skipped = 0
    for name, why in zip(choice.games, choice.why, strict=True):
        echo(f"checking {why}")
        checks = trio.run(
            functools.partial(
                check_bot,
                argv,
                game=name,
                timeout=timeout,
                games=games,
                tc=tc,
                limits=limits,
                sandbox=sandbox,
                cwd=cwd,
                entry=entry,
                builtin=builtin,
            )
        )
        for check in checks:
            echo(check.line())
        prefix = f"{name}: " if len(choice.games) > 1 else ""
        failed += [prefix + c.name for c in checks if not c.passed]
        skipped += sum(c.skipped for c in checks)
        total += len(checks)
    return summary(
        failed, total, skipped, time.monotonic() - started, f"command: {shlex.join(command)}", echo
    )


def summary(
    failed: list[str],
    total: int,
    skipped: int,
    took: float,
    what: str,
    echo: Callable[[str], None],
) -> int:
    """The last line (and, after a failure, ``what`` was checked); the exit status."""
    if failed:
        echo(f"{len(failed)} of {total} checks failed ({', '.join(failed)}) in {took:.1f} s")
        echo(what)
        return 1
    if skipped:
        echo(f"all {total - skipped} checks run passed, {skipped} skipped, in {took:.1f} s")
    else:
        echo(f"all {total} checks passed in {took:.1f} s")
    return 0


__all__ = [
    "Check",
    "Decision",
    "GameChoice",
    "check_bot",
    "choose_games",
    "known_games",
    "decisions",
    "conversation_checks",
    "run_checks",
    "summary",
]
