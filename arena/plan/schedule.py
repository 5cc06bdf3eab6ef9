"""The tournament schedule: a deterministic list of pair tasks.

A pair task is two games between the same two bots on the same opening with
sides swapped, so that neither the opening nor the first-move advantage favours
either bot. Tasks are plain values (a frozen Struct) so that the trio runner
today, and a distributed backend later, can execute them anywhere and send back
plain records.

The schedule follows from the config alone: openings are drawn from a
``random.Random`` seeded with the tournament seed (or read from the openings
file) in task order. A resumed run therefore recomputes the identical list and
skips the game keys the store already holds.

Order: round by round (a round gives every pairing one pair task), and inside a
round in circle-method (Berger) order, so the first tasks of a tournament
already cover every pairing and consecutive tasks involve different bots.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Callable, Sequence

import msgspec

from arena.games import Game, get_game
from arena.plan.config import TournamentConfig

__all__ = [
    "PairTask",
    "build_schedule",
    "draw_openings",
    "pairings",
    "schedule_fingerprint",
]

OpeningSource = Callable[[int], str]
"""Gives the opening position text of the task with the given index."""


class PairTask(msgspec.Struct, frozen=True, kw_only=True):
    """Two games on one opening: game 1 has ``a`` as player 0, game 2 has ``b``.

    ``key`` is unique in the tournament and stable across runs of the same
    config (``r<round>:<a>:<b>``); the games' keys append ``/1`` and ``/2``.
    """

    index: int
    key: str
    round: int
    a: str
    b: str
    opening: str
    game: str
    variant: str

    def game_key(self, number: int) -> str:
        """The key of game ``number`` (1 or 2)."""
        _check_number(number)
        return f"{self.key}/{number}"

    def players(self, number: int) -> tuple[str, str]:
        """(player 0, player 1) of game ``number`` (1 or 2)."""
        _check_number(number)
        return (self.a, self.b) if number == 1 else (self.b, self.a)

    @property
    def game_keys(self) -> tuple[str, str]:
        return (self.game_key(1), self.game_key(2))


def _check_number(number: int) -> None:
    if number not in (1, 2):
        raise ValueError(f"a pair task has games 1 and 2, not {number}")


def pairings(config: TournamentConfig) -> list[tuple[str, str]]:
    """One round's pairings ``(a, b)`` in playing order.

    Round robin: every unordered pair once, in circle-method order, with ``a``
    the bot listed first in the file. Gauntlet: every challenger against every
    other bot, rotated so that challengers meet different opponents side by side.
    """
    names = [bot.name for bot in config.bots]
    if config.format == "gauntlet":
        challengers = list(config.challengers)
        opponents = [n for n in names if n not in challengers]
        return [
            (c, opponents[(j + ci) % len(opponents)])
            for j in range(len(opponents))
            for ci, c in enumerate(challengers)
        ]
    order = {name: i for i, name in enumerate(names)}
    result = []
    for x, y in _circle(names):
        result.append((x, y) if order[x] < order[y] else (y, x))
    return result


def _circle(names: Sequence[str]) -> list[tuple[str, str]]:
    """Berger tables: n-1 (n even) sub-rounds in which every bot plays once."""
    slots: list[str | None] = list(names)
    if len(slots) % 2:
        slots.append(None)  # a bye
    n = len(slots)
    result = []
    for _ in range(n - 1):
        for i in range(n // 2):
            x, y = slots[i], slots[n - 1 - i]
            if x is not None and y is not None:
                result.append((x, y))
        slots = [slots[0], slots[-1], *slots[1:-1]]
    return result


def draw_openings(config: TournamentConfig, count: int, game: Game | None = None) -> list[str]:
    """``count`` opening position texts, in task order.

    From the openings file (the positions loading checked, cycled), else ``plies``
    random actions with a generator seeded by the tournament seed, else the
    initial position. A game
    whose openings are deals (``Game.deals_openings``, e.g. Sekigahara) is dealt
    a seeded opening per task even with ``plies = 0``.
    """
    game = game or get_game(config.game)
    positions = config.openings.positions
    if positions:
        return [positions[i % len(positions)] for i in range(count)]
    if config.openings.plies == 0 and not game.deals_openings:
        start = game.new_state(config.variant).to_text()
        return [start] * count
    rng = random.Random(config.seed)
    return [
        game.random_opening(config.variant, config.openings.plies, rng).to_text()
        for _ in range(count)
    ]


def build_schedule(
    config: TournamentConfig,
    *,
    game: Game | None = None,
    opening_source: OpeningSource | None = None,
) -> list[PairTask]:
    """Every pair task of the tournament, in playing order.

    ``game`` defaults to the registered game the config names; ``opening_source``
    (task index -> position text) replaces the config's openings, for tests and
    for callers with their own opening books.
    """
    if config.format in ("swiss", "knockout"):
        raise ValueError(f"a {config.format}'s rounds are drawn from results: arena/plan/rounds.py")
    game = game or get_game(config.game)
    variant = config.variant
    one_round = pairings(config)
    rounds = config.games_per_pairing // 2
    count = rounds * len(one_round)
    if opening_source is None:
        openings = draw_openings(config, count, game)
        opening_source = openings.__getitem__
    tasks: list[PairTask] = []
    for r in range(rounds):
        for a, b in one_round:
            index = len(tasks)
            tasks.append(
                PairTask(
                    index=index,
                    key=f"r{r + 1}:{a}:{b}",
                    round=r + 1,
                    a=a,
                    b=b,
                    opening=opening_source(index),
                    game=game.name,
                    variant=variant,
                )
            )
    return tasks


def schedule_fingerprint(config: TournamentConfig, tasks: Sequence[PairTask]) -> str:
    """A hash of everything that makes two runs' games comparable.

    The store keeps it so that resuming with a changed file is caught: the
    tasks themselves (bots, pairings, openings, game, variant) and the settings
    that change how a game is played (time controls, ply cap). Bot commands,
    concurrency, limits and fault policy may change between runs: fixing a path
    or using more cores does not invalidate finished games.
    """
    relevant = {
        "tasks": list(tasks),
        "tc": config.tc,
        "bot_tc": {bot.name: bot.tc for bot in config.bots if bot.tc is not None},
        "max_plies": config.max_plies,
    }
    return hashlib.sha256(msgspec.json.encode(relevant, order="sorted")).hexdigest()
