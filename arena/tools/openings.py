"""Openings books: random walks from the start, kept when they are fair and open.

A random 2-ply opening sometimes hands the first mover a win in a few moves;
such a pair of games says nothing about which bot is stronger. A book keeps
only positions that

* neither side wins by force within ``depth`` plies (an exact AND/OR search
  over the rules core, through the generic ``State`` interface), and
* a scoring bot, run as a subprocess through the protocol like any other bot,
  scores near equal (its ``info`` score for the side to move is within
  ``max_score``), and
* optionally (``Probe``), the side does not decide it in play. Kamisado has
  no draws, so a pair of games (one opening, colours swapped) splits 1-1
  exactly when the opening's side wins both, and a split pair says nothing
  about which bot is stronger. A near-equal score says little about that (a
  fixed evaluation can call even a position that one side wins in every line
  the bots play), so the probe plays it: pairs of games between two players
  of near-equal strength, and keeps the position only if no pair splits.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import trio

from arena.engine.bot import Engine
from arena.engine.config import EngineConfig
from arena.engine.sandbox import SandboxSettings
from arena.games.base import Game, GameError, State
from arena.match.clock import Clock, TimeControl
from arena.match.referee import play_game
from arena.match.wire import clock_info
from arena.plan.config import BotConfig, Limits
from arena.plan.launch import engine_config
from arena.plan.prepare import prepare
from arena.protocol.messages import GameOver, Go, NewGame


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


def replay(game: Game, variant: str, actions: Sequence[str]) -> State | None:
    """A walk played again in ``variant``: one walk serves the book of every match
    kind and the probe. ``None`` if it is not legal there or ends the game."""
    state = game.new_state(variant)
    try:
        for action in actions:
            state.apply_action(action)
    except GameError:
        return None
    return None if state.is_terminal() else state


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
        state = replay(game, variant, actions)
        return None if state is None else Candidate(tuple(actions), state)

    return draw


async def bot_score(
    engine: Engine, game: Game, variant: str, state: State, control: TimeControl
) -> float | None:
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
            clock=clock_info((clock, clock), player),
        ),
        timeout=clock.budget(player) + 1.0,
    )
    await engine.notify(GameOver(result="1/2-1/2", reason="adjudicated"))
    scores = [i.score for i in reply.infos if i.score is not None]
    return scores[-1] if scores else None


@dataclass(frozen=True, slots=True)
class Probe:
    """Played check of a candidate: ``pairs`` pairs of games in ``variant``, colours
    swapped, between ``strong`` at ``strong_movetime`` and ``weak`` at
    ``weak_movetime`` seconds per decision.

    Near-equal players are the point: a clearly stronger one wins from both
    sides of almost every opening, so its pairs hide what the side is worth.
    Between near equals a decided opening shows as a split pair. The built-in
    alphabeta is deterministic but for timing, so the two players differ a
    little in time to make their games differ."""

    strong: list[str]
    weak: list[str]
    variant: str
    pairs: int = 1
    strong_movetime: float = 0.1
    weak_movetime: float = 0.06


async def splits(game: Game, state: State, probe: Probe, engines: tuple[Engine, Engine]) -> bool:
    """Whether some probe pair from ``state`` splits 1-1 (the same side won both games)."""
    controls = {
        engines[0].name: TimeControl(movetime=probe.strong_movetime),
        engines[1].name: TimeControl(movetime=probe.weak_movetime),
    }
    for _ in range(probe.pairs):
        scores = []
        for order in (engines, engines[::-1]):
            record = await play_game(
                game,
                state,
                list(order),
                [controls[e.name] for e in order],
                variant=probe.variant,
            )
            scores.append(record.score)
        if scores[0] == scores[1] != 0.5:
            return True
    return False


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
    probe: Probe | None = None,
    stats: Counter[str] | None = None,
    progress: Callable[[int, int], None] | None = None,
    builtins: Sequence[str] = (),
    limits: Limits | None = None,
    sandbox: SandboxSettings | None = None,
) -> list[str]:
    """``count`` distinct position texts of the book (fewer only if ``max_tries`` ran out).

    The bots run confined as in a tournament: ``limits`` and ``sandbox`` default to
    a tournament file's ``[limits]`` and ``[sandbox]`` defaults.

    ``builtins`` names the built-in bots among ``bot`` and the probe's (prepared
    first; a command's path never makes it one).

    ``stats`` (if given) counts each walk's fate: ``forced`` (or illegal),
    ``duplicate``, ``score`` (beyond ``max_score``), ``split`` (a probe pair
    split 1-1), ``kept``.

    Raises ``GameError`` for a game that deals its openings (there is no walk to
    curate) or a variant the game does not have.
    """
    if game.deals_openings:
        raise GameError(f"{game.name} deals its openings; there is no book to generate")
    check_variant = check_variant or variant
    stats = stats if stats is not None else Counter()
    for v in (variant, check_variant, *([probe.variant] if probe else [])):
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
    for name in builtins:
        await prepare(name)

    def config(name: str, command: list[str]) -> EngineConfig:
        return engine_config(BotConfig(name=name, command=command), limits=limits, sandbox=sandbox)

    async with (
        Engine(config("scorer", bot)) as engine,
        Engine(config("strong", probe.strong if probe else bot)) as strong,
        Engine(config("weak", probe.weak if probe else bot)) as weak,
    ):
        await engine.start(game.name, variant)
        while len(kept) < count and tries < limit:
            tries += 1
            candidate = draw()
            if candidate is None:
                stats["forced"] += 1
                continue
            text = candidate.state.to_text()
            if text in seen:
                stats["duplicate"] += 1
                continue
            seen.add(text)
            score = await bot_score(engine, game, variant, candidate.state, control)
            if score is None or abs(score) > max_score:
                stats["score"] += 1
            elif probe is not None and (
                (played := replay(game, probe.variant, candidate.actions)) is None
                or await splits(game, played, probe, (strong, weak))
            ):
                stats["split"] += 1
            else:
                stats["kept"] += 1
                kept.append(text)
            if progress is not None:
                progress(len(kept), tries)
            await trio.lowlevel.checkpoint()
    return kept


WALK_FATES = ("kept", "forced", "duplicate", "score", "split")
"""What :func:`generate` counts in ``stats``, in the order a book's header lists them."""


def book_text(
    texts: Sequence[str],
    stats: Counter[str],
    *,
    game: str,
    variant: str,
    plies: int,
    count: int,
    bot: str,
    depth: int,
    check_variant: str,
    movetime: float,
    max_score: float,
    seed: int,
    probe: Probe | None = None,
    probe_bots: tuple[str, str] = ("", ""),
) -> str:
    """The openings file: one position text per line after a header of ``#`` lines
    saying how the book was made (the ``arena openings generate`` command that makes
    it again, with ``bot`` and ``probe_bots`` as they were named there) and what its
    positions are, with the fate of every walk tried."""
    probe_text = ""
    if probe is not None:
        probe_text = (
            f" --probe-pairs {probe.pairs} --probe-bot {probe_bots[0]} "
            f"--probe-weak {probe_bots[1]} --probe-movetime {probe.strong_movetime:g} "
            f"{probe.weak_movetime:g} --probe-variant {probe.variant}"
        )
    header = (
        f"# arena openings generate --game {game} --variant {variant} --plies {plies} "
        f"--count {count} --bot {bot} --depth {depth} --check-variant {check_variant} "
        f"--movetime {movetime:g} --max-score {max_score:g}{probe_text} --seed {seed}\n"
        f"# {len(texts)} positions: no side wins by force within {depth} plies "
        f"({check_variant}), |score| <= {max_score:g}"
        + (f", no probe pair split ({probe.pairs} in {probe.variant})" if probe else "")
        + "\n# walks: "
        + ", ".join(f"{stats[k]} {k}" for k in WALK_FATES)
        + "\n"
    )
    return header + "".join(t + "\n" for t in texts)
