"""Openings books: random walks from the start, kept when they are fair and open.

A random 2-ply opening sometimes hands the first mover a win in a few moves;
such a pair of games says nothing about which bot is stronger. A book keeps
only positions that

* neither side wins by force within ``depth`` plies (an exact AND/OR search
  over the rules core, through the generic ``State`` interface), and
* a scoring bot, run as a subprocess through the protocol like any other bot,
  scores near equal (its ``info`` score for the side to move is within
  ``max_score``).

The forced-win check runs in ``check_variant``: for Kamisado the single round,
whose game end is the round win that decides a match's opening; the position
written is the same walk replayed in the book's own variant, so one walk gives
the book for every match kind.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

import trio

from arena.clock import Clock, TimeControl
from arena.engine import Engine, EngineConfig
from arena.games.base import Game, GameError, State
from arena.protocol import ClockInfo, GameOver, Go, NewGame


@dataclass(frozen=True, slots=True)
class Candidate:
    """One random walk: its actions and the position it reaches in the book's variant."""

    actions: tuple[str, ...]
    state: State


def wins_by_force(state: State, player: int, plies: int) -> bool:
    """Whether ``player`` can force the game to end in their win within ``plies`` plies."""
    if state.is_terminal():
        outcome = state.outcome()
        return outcome is not None and outcome.returns[player] == 1
    if plies <= 0:
        return False
    mover = state.current_player()
    for action in state.legal_actions():
        child = state.clone()
        child.apply_action(action)
        wins = wins_by_force(child, player, plies - 1)
        if mover == player and wins:
            return True
        if mover != player and not wins:
            return False
    return mover != player


def forced(state: State, plies: int) -> bool:
    """Whether either side wins ``state`` by force within ``plies`` plies."""
    return wins_by_force(state, 0, plies) or wins_by_force(state, 1, plies)


def walks(
    game: Game, variant: str, check_variant: str, plies: int, depth: int, rng: random.Random
) -> Callable[[], Candidate | None]:
    """A source of random walks that pass the forced-win check (``None`` when one fails)."""

    def draw() -> Candidate | None:
        check = game.new_state(check_variant)
        actions: list[str] = []
        for _ in range(plies):
            if check.is_terminal():
                return None
            action = rng.choice(check.legal_actions())
            check.apply_action(action)
            actions.append(action)
        if check.is_terminal() or forced(check, depth):
            return None
        state = game.new_state(variant)
        try:
            for action in actions:
                state.apply_action(action)
        except GameError:
            return None  # the walk is not legal in the book's variant
        if state.is_terminal():
            return None
        return Candidate(tuple(actions), state)

    return draw


async def bot_score(engine: Engine, game: Game, variant: str, state: State,
                    control: TimeControl) -> float | None:  # fmt: skip
    """The bot's last ``info`` score for the side to move in ``state`` (``None``: none sent)."""
    player = state.current_player()
    await engine.new_game(
        NewGame(
            game=game.name,
            variant=variant,
            player=player,
            players=[engine.name, engine.name],
            position=state.observation_text(player),
            time_control=str(control),
        )
    )
    clock = Clock(control)
    reply = await engine.go(
        Go(
            player=player,
            position=state.observation_text(player),
            observation=state.observation(player),
            history=state.history(player),
            legal=state.legal_actions(),
            clock=ClockInfo.from_clock(clock, player),
        ),
        timeout=clock.budget(player) + 1.0,
    )
    await engine.notify(GameOver(result="1/2-1/2", reason="adjudicated"))
    scores = [i.score for i in reply.infos if i.score is not None]
    return scores[-1] if scores else None


async def generate(
    game: Game,
    variant: str,
    *,
    plies: int,
    count: int,
    depth: int,
    bot: list[str],
    check_variant: str | None = None,
    movetime: float = 0.2,
    max_score: float = 60,
    seed: int = 1,
    max_tries: int | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> list[str]:
    """``count`` distinct position texts of the book (fewer only if ``max_tries`` ran out).

    Raises ``GameError`` for a game that deals its openings (there is no walk to
    curate) or a variant the game does not have.
    """
    if game.deals_openings:
        raise GameError(f"{game.name} deals its openings; there is no book to generate")
    check_variant = check_variant or variant
    for v in (variant, check_variant):
        if v not in game.variants:
            raise GameError(
                f"unknown {game.name} variant {v!r} (known: {', '.join(game.variants)})"
            )
    rng = random.Random(seed)
    draw = walks(game, variant, check_variant, plies, depth, rng)
    control = TimeControl(movetime=movetime)
    seen: set[str] = set()
    kept: list[str] = []
    tries = 0
    limit = max_tries if max_tries is not None else 50 * count
    async with Engine(EngineConfig(name="scorer", command=bot)) as engine:
        await engine.start(game.name, variant)
        while len(kept) < count and tries < limit:
            tries += 1
            candidate = draw()
            if candidate is None:
                continue
            text = candidate.state.to_text()
            if text in seen:
                continue
            seen.add(text)
            score = await bot_score(engine, game, variant, candidate.state, control)
            if score is not None and abs(score) <= max_score:
                kept.append(text)
            if progress is not None:
                progress(len(kept), tries)
            await trio.lowlevel.checkpoint()
    return kept
