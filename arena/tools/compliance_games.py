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

from arena.engine.bot import Engine
from arena.engine.errors import EngineError
from arena.engine.player import Player
from arena.engine.sandbox import SandboxSettings
from arena.games import Game, State
from arena.match.clock import TimeControl
from arena.match.record import GameRecord
from arena.match.referee import RefereeSettings, play_game
from arena.plan.config import BotConfig, Limits
from arena.plan.launch import engine_config
from arena.protocol.text import visible

STAGE_TC = "2+0.05"
MAX_PLIES = 800


@dataclass(frozen=True, slots=True)
class Check:
    """One verdict of ``arena check-bot``: ``detail`` says what was seen (or why it
    failed). Here, one (variant, opponent) series: passed, or the first fault with
    where it happened. A check not run (nothing to check, or no opponent) is
    ``skipped``, with why in ``detail``: not failed, and never shown as passed."""

    name: str
    passed: bool
    detail: str
    skipped: bool = False
    output: str = ""
    """For a fault: the head and tail of what the bot wrote (its stderr, stray stdout)."""

    def line(self) -> str:
        """``PASS name: detail`` (``FAIL``, ``SKIP``) — the form ``arena check-bot``
        prints, with control characters shown as escapes (a detail quotes what the
        bot sent); a fault's output follows on lines of its own, each indented by
        ``  | ``."""
        verdict = "SKIP" if self.skipped else "PASS" if self.passed else "FAIL"
        line = visible(f"{verdict} {self.name}: {self.detail}")
        said = [visible(x) for x in self.output.rstrip().splitlines()]
        return "\n".join([line, *(f"  | {x}" for x in said)])


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
    """Whether the built-in ``opponent`` declares ``game``/``variant`` (``random``
    plays every game; a game's ``strongest_bot`` may not play each of its variants).
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
    bot: Player,
    game: Game,
    variants: list[str],
    *,
    games: int,
    seed: int = 2026,
    tc: str = STAGE_TC,
    limits: Limits | None = None,
    sandbox: SandboxSettings | None = None,
) -> list[Check]:
    """``games`` games per variant and opponent, seats alternating (game 1 as player 0);
    the opponents run under ``limits`` and ``sandbox``, as in a tournament."""
    from arena.plan.builtins import resolve_builtin
    from arena.plan.prepare import prepare

    control = TimeControl.parse(tc)
    settings = RefereeSettings(max_plies=MAX_PLIES)
    out: list[Check] = []
    for variant in variants:
        for opponent in opponents(game):
            name = f"games: {variant} vs {opponent}"
            command = [*resolve_builtin(opponent), "--seed", str(seed)]
            named = opponent if opponent != bot.name else f"{opponent}-2"
            config = engine_config(
                BotConfig(name=named, command=command), limits=limits, sandbox=sandbox
            )
            by_seat = [[0, 0, 0], [0, 0, 0]]  # per seat: wins, losses, draws
            notable: Counter[str] = Counter()
            roles: tuple[str, str] = ("player 0", "player 1")
            await prepare(opponent)
            async with Engine(config) as other:
                if not await _plays(other, game, variant):
                    why = f"not run: the built-in {opponent} does not play {game.name}/{variant}"
                    out.append(Check(name, True, why, skipped=True))
                    continue
                for number in range(1, games + 1):
                    seat = (number - 1) % 2
                    opening = _opening(game, variant, seed + number)
                    roles = opening.player_names()
                    engines: list[Player] = [bot, other] if seat == 0 else [other, bot]
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
                        out.append(Check(name, False, detail, output=record.stderr_tails[seat]))
                        return out
                    notable += notable_decisions(game, record, opening, seat)
                    mine = record.score if seat == 0 else 1.0 - record.score
                    by_seat[seat][0 if mine == 1.0 else 1 if mine == 0.0 else 2] += 1
            extra = "".join(f"; {n} {kind}" for kind, n in notable.items())
            out.append(
                Check(
                    name,
                    True,
                    f"{games} game{'s' if games != 1 else ''}, all legal, no fault; "
                    f"{by_seat_text(roles, by_seat)}{extra}",
                )
            )
    return out


def by_seat_text(roles: tuple[str, str], by_seat: list[list[int]]) -> str:
    """``by seat (not a strength test): as attacker +1 -0, as defender +0 -1``.

    The stage plays a few seeded games to exercise the protocol; in the Sekigahara
    battle the seat decides most of them (each side wins its own), so a total such
    as +1 -1 would read as strength and say nothing. Draws are shown only when
    there were some.
    """
    parts = []
    for role, (wins, losses, draws) in zip(roles, by_seat, strict=True):
        if wins + losses + draws:
            parts.append(f"as {role} +{wins} -{losses}" + (f" ={draws}" if draws else ""))
    return "by seat (not a strength test): " + ", ".join(parts)


__all__ = [
    "STAGE_TC",
    "Check",
    "by_seat_text",
    "notable_decisions",
    "opponents",
    "play_stage",
]
