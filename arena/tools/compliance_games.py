"""check-bot's whole-game stage: real games against built-in bots.

Single requests miss what only a whole match exercises: a move list that
overflows at the 102 moves of a free choice, state kept wrongly across rounds,
a regroup followed by the loser's free opening, time management over a game. So
the bot plays seeded games in every variant it declares, as first and as second
player, against ``random`` and against the game's strongest built-in bot
(``Game.strongest_bot``, which wins rounds of Kamisado, so the bot must regroup
and open later rounds itself), at a
short time control through the real referee. The first game the bot loses by a
fault ends the stage with the game, the ply and the position it faced.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass

from arena.engine.bot import Engine, EngineConfig, EngineError
from arena.games import Game, State
from arena.match.clock import TimeControl
from arena.match.record import GameRecord
from arena.match.referee import RefereeSettings, play_game
from arena.plan.config import builtin_function

STAGE_TC = "2+0.05"
MAX_PLIES = 800


@dataclass(frozen=True, slots=True)
class Check:
    """One verdict of ``arena check-bot``: ``detail`` says what was seen (or why it
    failed). Here, one (variant, opponent) series: passed, or the first fault with
    where it happened."""

    name: str
    passed: bool
    detail: str

    def line(self) -> str:
        """``PASS name: detail`` — the form ``arena check-bot`` prints."""
        return f"{'PASS' if self.passed else 'FAIL'} {self.name}: {self.detail}"


def opponents(game: Game) -> list[str]:
    return list(dict.fromkeys(["random", game.strongest_bot]))


def _opening(game: Game, variant: str, seed: int) -> State:
    """A seeded opening, read back from its text as a tournament does."""
    plies = 0 if game.deals_openings else 2
    state = game.random_opening(variant, plies, random.Random(seed))
    return game.state_from_text(state.to_text())


def notable_decisions(game: Game, record: GameRecord, opening: State, seat: int) -> Counter[str]:
    """The notable decisions (``Game.notable_decision``) the bot made, by kind,
    replayed from the record."""
    state = opening.clone()
    kinds: Counter[str] = Counter()
    for action in record.actions:
        if action.player == seat and not action.forced:
            kind = game.notable_decision(state)
            if kind is not None:
                kinds[kind] += 1
        state.apply_action(action.action)
    return kinds


async def _plays(opponent: Engine, game: Game, variant: str) -> bool:
    """Whether the built-in ``opponent`` declares ``game``/``variant`` (a game of
    its own package has no built-in bot; ``random`` plays Kamisado and Sekigahara).
    One that does not start is left to the games, which record why."""
    try:
        identity = await opponent.start(game.name, variant, check_identity=False)
    except EngineError:
        return True
    return identity.supports(game.name, variant)


def _fault_detail(game: Game, record: GameRecord, opening: State, seat: int, number: int) -> str:
    role = opening.player_names()[seat]
    try:
        seen = game.state_from_text(record.final_position).observation_text(seat)
    except Exception:  # noqa: BLE001 - a record's text always parses; never hide the fault
        seen = record.final_position
    return (
        f"game {number} (as {role}, player {seat}), ply {len(record.actions) + 1}: "
        f"{record.reason}: {record.detail}; position: {seen}; opening: {opening.to_text()}"
    )


async def play_stage(
    bot: Engine,
    game: Game,
    variants: list[str],
    *,
    games: int,
    seed: int = 2026,
    tc: str = STAGE_TC,
) -> list[Check]:
    """``games`` games per variant and opponent, seats alternating (game 1 as player 0)."""
    resolve_builtin = builtin_function("resolve_builtin")
    if resolve_builtin is None:
        return [Check("games", False, "not run: the built-in bots are not installed")]
    control = TimeControl.parse(tc)
    settings = RefereeSettings(max_plies=MAX_PLIES)
    out: list[Check] = []
    for variant in variants:
        for opponent in opponents(game):
            name = f"games: {variant} vs {opponent}"
            command = [*resolve_builtin(opponent), "--seed", str(seed)]
            config = EngineConfig(
                name=opponent if opponent != bot.name else f"{opponent}-2",
                command=command,
                limits=bot.config.limits,
                sandbox=bot.config.sandbox,
            )
            wins = losses = draws = 0
            notable: Counter[str] = Counter()
            async with Engine(config) as other:
                if not await _plays(other, game, variant):
                    why = f"skipped: the built-in {opponent} does not play {game.name}/{variant}"
                    out.append(Check(name, True, why))
                    continue
                for number in range(1, games + 1):
                    seat = (number - 1) % 2
                    opening = _opening(game, variant, seed + number)
                    engines = [bot, other] if seat == 0 else [other, bot]
                    record = await play_game(
                        game,
                        opening,
                        engines,
                        [control, control],
                        variant=variant,
                        settings=settings,
                    )
                    if record.faulty == seat:
                        detail = _fault_detail(game, record, opening, seat, number)
                        out.append(Check(name, False, detail))
                        return out
                    notable += notable_decisions(game, record, opening, seat)
                    mine = record.score if seat == 0 else 1.0 - record.score
                    wins, losses = wins + (mine == 1.0), losses + (mine == 0.0)
                    draws += mine == 0.5
            seats = "as first and second player" if games > 1 else "as first player"
            extra = "".join(f", {n} {kind}" for kind, n in notable.items())
            out.append(
                Check(
                    name,
                    True,
                    f"{games} games {seats}, no fault: +{wins} -{losses} ={draws}{extra}",
                )
            )
    return out


__all__ = ["STAGE_TC", "Check", "notable_decisions", "opponents", "play_stage"]
