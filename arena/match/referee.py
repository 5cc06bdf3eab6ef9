"""Plays one game between two engines on a rules-core state; every fault becomes a result.

The referee is the only judge: it asks the bot whose decision it is, checks the
answer against the rules core, charges the time the engine layer measured (request
written to answer read, less the transport's leeway: ``Reply.elapsed``) to that
player's clock, and ends the game with a result
and a reason whatever a bot does. A forced action is played without asking, at no
cost in time, only when the game says every player can see it is forced
(``State.forced_action``: a Kamisado zero-length move); a decision forced only by
hidden facts is asked like any other, so clocks and increments never tell the
opponent what the mover hides.

It knows nothing of storage or ratings: it returns a :class:`GameRecord`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import trio

from arena.engine.errors import EngineError, EngineTimeout
from arena.engine.player import Player
from arena.games import Game, State
from arena.match.clock import Clock, TimeControl
from arena.match.events import GameMoved
from arena.match.info import InfoBudget
from arena.match.record import ADJUDICATED, ILLEGAL, START, TIME, ActionRecord, GameRecord
from arena.match.wire import clock_info
from arena.protocol.messages import Action, GameOver, Go, NewGame


@dataclass(frozen=True, slots=True)
class RefereeSettings:
    """Limits of one game. ``max_plies`` caps a game (then adjudicated a draw)."""

    max_plies: int = 1000
    newgame_timeout: float = 10.0
    restart: bool = True
    """Start again an engine whose process faulted (a tournament's next game); ``False``:
    it loses this game with that fault (``arena play`` started it for this game)."""
    clock: str = "wall"
    """What a move is charged: ``wall`` or ``cpu`` time (``arena/match/clock.py``)."""


class _Fault(Exception):
    def __init__(self, player: int, reason: str, detail: str) -> None:
        super().__init__(detail)
        self.player = player
        self.reason = reason
        self.detail = detail


async def play_game(
    game: Game,
    opening: State,
    engines: Sequence[Player],
    controls: Sequence[TimeControl],
    *,
    variant: str,
    settings: RefereeSettings | None = None,
    on_action: Callable[[GameMoved], None] | None = None,
    key: str = "",
) -> GameRecord:
    """Play ``opening`` to the end between ``engines[0]`` (player 0) and ``engines[1]``.

    ``on_action`` receives each action as the live event watchers get (``key``
    names the game in it).

    Engines that are not running (first game, or faulted in an earlier one) are
    started first; a bot that cannot start (or does not answer ``hello``) loses the
    game with reason ``start``, its detail saying how it failed.
    The engines are left running for the next game unless they faulted.
    """
    settings = settings or RefereeSettings()
    names = [e.name for e in engines]
    state = opening.clone()
    actions: list[ActionRecord] = []
    budget = InfoBudget(len(engines))  # what the record keeps of the bots' info lines
    clocks = [Clock(controls[0], settings.clock), Clock(controls[1], settings.clock)]
    started = time.time()
    for engine in engines:
        if settings.restart or engine.running:  # else a failed start's tail is this game's
            engine.stderr_tail(clear=True)

    def finish(
        score: float, reason: str, detail: str = "", faulty: int | None = None
    ) -> GameRecord:
        outcome = state.outcome()
        return GameRecord(
            game=game.name,
            variant=variant,
            players=names,
            opening=opening.to_text(),
            actions=actions,
            score=score,
            reason=reason,
            detail=detail,
            faulty=faulty,
            final_position=state.to_text(),
            outcome=dict(outcome.details) if outcome else {},
            time_control=" | ".join(dict.fromkeys(str(c) for c in controls)),
            stderr_tails=[e.stderr_tail() for e in engines],
            identities=[_identity(e) for e in engines],
            sandbox=[e.sandbox_record for e in engines],
            started_at=started,
            ended_at=time.time(),
        )

    try:
        await _prepare(game, state, engines, controls, names, variant, settings)
        while not state.is_terminal():
            if len(actions) >= settings.max_plies:
                record = finish(0.5, ADJUDICATED, f"ply cap of {settings.max_plies} reached")
                break
            await _one_decision(state, engines, clocks, actions, budget)
            if on_action is not None:
                last = actions[-1]
                on_action(
                    GameMoved(
                        key=key,
                        ply=len(actions),
                        player=last.player,
                        action=last.action,
                        ms=last.ms,
                        forced=last.forced,
                        position=state.to_text(),
                        clocks=[clocks[0].remaining_ms(0), clocks[1].remaining_ms(1)],
                        t=time.time(),
                        info=last.info,
                        rtt_ms=last.rtt_ms,
                    )
                )
        else:
            outcome = state.outcome()
            assert outcome is not None
            record = finish(outcome.returns[0], outcome.reason)
    except _Fault as fault:
        score = 0.0 if fault.player == 0 else 1.0
        record = finish(score, fault.reason, fault.detail, fault.player)
    await _announce(engines, record)
    return record


async def _prepare(
    game: Game,
    state: State,
    engines: Sequence[Player],
    controls: Sequence[TimeControl],
    names: list[str],
    variant: str,
    settings: RefereeSettings,
) -> None:
    """Start whatever is not running and announce the new game to both bots.

    Both bots start at once: a game's first start is the longer of the two, not
    their sum (a compiled bot loads its search for a second or more, a script
    answers in a few tenths). A start that fails is the fault of the first player
    whose start failed, as if they had started in turn; the other bot, started
    anyway, stays running for its next game.
    """
    faults: list[_Fault | None] = [None] * len(engines)

    async def start(player: int, engine: Player) -> None:
        try:
            if engine.faulted is not None and not settings.restart:
                raise engine.faulted
            if engine.starts:
                await engine.restart(game.name, variant)
            else:
                await engine.start(game.name, variant)
        except EngineError as exc:  # a start fault, whatever went wrong: the detail says
            faults[player] = _Fault(player, START, f"{engine.name}: {exc.detail}")

    waiting = [(p, e) for p, e in enumerate(engines) if not e.running]
    if len({id(e) for _, e in waiting}) < len(waiting):  # one engine twice: one start
        waiting = waiting[:1]
    async with trio.open_nursery() as nursery:
        for player, engine in waiting:
            nursery.start_soon(start, player, engine)
    for fault in faults:
        if fault is not None:
            raise fault
    for player, engine in enumerate(engines):
        try:
            await engine.new_game(
                NewGame(
                    game=game.name,
                    variant=variant,
                    player=player,
                    players=names,
                    position=state.observation_text(player),
                    time_control=str(controls[player]),
                ),
                timeout=settings.newgame_timeout,
            )
        except EngineError as exc:
            raise _Fault(player, exc.reason, f"{engine.name}: {exc.detail}") from None


async def _one_decision(
    state: State,
    engines: Sequence[Player],
    clocks: list[Clock],
    actions: list[ActionRecord],
    budget: InfoBudget,
) -> None:
    player = state.current_player()
    forced = state.forced_action()
    if forced is not None:
        state.apply_action(forced)
        actions.append(ActionRecord(player, forced, 0, True))
        return
    legal = state.legal_actions()
    engine = engines[player]
    clock = clocks[player]
    request = Go(
        player=player,
        position=state.observation_text(player),
        observation=state.observation(player),
        history=state.history(player),
        legal=legal,
        clock=clock_info(clocks, player),
    )
    timeout = clock.wall_budget(player)
    used = engine.cpu_seconds()
    # The referee's own deadline, a moment before the engine's (which counts from its
    # write): at a time loss the bot's group still holds the CPU time it used. Both
    # run the transport's leeway longer (a remote bot's network allowance).
    with trio.move_on_after(timeout + engine.leeway) as waiting:
        try:
            reply = await engine.go(request, timeout=timeout + _BACKSTOP)
        except EngineError as exc:
            if exc.reason == TIME:
                clock.flagged = player
            raise _Fault(player, exc.reason, f"{engine.name}: {exc.detail}") from None
    if waiting.cancelled_caught:
        clock.flagged = player
        now = engine.cpu_seconds()
        cpu = "" if now is None or used is None else f" ({_ms(now - used)} of CPU)"
        # A remote bot waited its leeway too: say so, or the line undercounts the wait.
        net = f" (+{_ms(engine.leeway)} network leeway)" if engine.leeway else ""
        lost = EngineTimeout(
            f"no answer within {timeout:.3f} s of wall time{net}{cpu}", engine=engine.name
        )
        engine.faulted = lost
        with trio.CancelScope(shield=True):
            await engine.stop(graceful=False)
        raise _Fault(player, TIME, f"{engine.name}: {lost.detail}")
    allowed = clock.budget(player)
    # The clock runs once the leeway is spent: it charges exactly ``reply.elapsed``.
    clock.start(player, reply.sent_at + reply.leeway)
    cpu_s = None if reply.cpu_ns is None else reply.cpu_ns / 1e9
    _, flagged = clock.stop(player, reply.received_at, cpu_s)
    elapsed_ms = reply.elapsed_ms
    answer = reply.answer
    assert isinstance(answer, Action)
    if flagged:
        cpu = "" if cpu_s is None else f" ({_ms(cpu_s)} of CPU)"
        charged = "CPU time" if clock.charge == "cpu" and cpu_s is not None else "wall time"
        raise _Fault(
            player,
            TIME,
            f"{engine.name}: answered after {elapsed_ms} ms{cpu}, out of time "
            f"({charged} charged, {_ms(allowed)} allowed)",
        )
    if answer.action not in legal:
        # A bot that plays an illegal action is out of step with the game: restart it.
        with trio.CancelScope(shield=True):
            await engine.stop(graceful=False)
        raise _Fault(player, ILLEGAL, f"{engine.name}: illegal action {answer.action!r}")
    state.apply_action(answer.action)
    info = None
    if reply.infos:
        last = reply.infos[-1]
        info = {
            k: v
            for k in ("depth", "score", "pv", "nodes", "playouts", "text")
            if (v := getattr(last, k)) is not None
        }
    if reply.infos_dropped:  # beyond the engine's bound: counted, not kept
        info = {**(info or {}), "dropped": reply.infos_dropped}
    info = budget.keep(player, info)  # bounded per action and per game (arena/match/info.py)
    cpu_ms = None if reply.cpu_ns is None else round(reply.cpu_ns / 1e6, 3)
    rtt = engine.round_trip_ms()
    rtt_ms = None if rtt is None else round(rtt, 1)
    actions.append(
        ActionRecord(player, answer.action, elapsed_ms, False, info or None, cpu_ms, rtt_ms)
    )


_BACKSTOP = 0.05
"""Seconds the engine's own timeout runs past the referee's (its write comes after)."""


def _ms(seconds: float) -> str:
    return f"{round(seconds * 1000)} ms"


def _identity(engine: Player) -> dict[str, Any]:
    """The bot's own account of itself, for the record (and ``arena export``)."""
    ident = engine.identity
    if ident is None:
        return {}
    fields = {"name": ident.name, "author": ident.author, "version": ident.version}
    return {k: v for k, v in fields.items() if v is not None}


async def _announce(engines: Sequence[Player], record: GameRecord) -> None:
    """Tell both bots the game is over; a dead or stuck bot does not delay the arena."""
    winner = {1.0: 0, 0.0: 1}.get(record.score)
    message = GameOver(
        result=record.result, reason=record.reason, detail=record.detail, winner=winner
    )
    for engine in engines:
        if engine.running:
            await engine.notify(message)


__all__ = ["RefereeSettings", "play_game"]
