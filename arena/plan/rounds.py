"""Swiss and knockout rounds, drawn from the results so far.

A round robin's schedule follows from the file alone; these formats' rounds
follow from the file *and* the games stored. :meth:`Rounds.draw` is a pure
function of both: it replays the tournament from round 1, drawing each round
from the games of the rounds before it, until it reaches a round (or a tied
knockout match's extra pair) whose games are not all stored. The tournament
calls it, plays what is missing, and calls it again: the round is the only
barrier, and a resumed run, mid-round or between rounds, draws exactly what
an uninterrupted one drew.

Disqualification (``[faults]``) is replayed the same way: an entrant counts as
disqualified for the draw of round r+1 if the fault rule held, in stored
order, over the games of rounds 1 to r. A disqualified entrant is not paired
again (Swiss) or loses its match by walkover (knockout); its unplayed games
score nothing.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import msgspec

from arena.games import Game, get_game
from arena.plan.config import Faults, TournamentConfig
from arena.plan.knockout import bracket_order, bracket_size, decide, seeded
from arena.plan.schedule import PairTask, draw_openings
from arena.plan.swiss import Drawn, SwissScores, default_rounds, initial_order, pair_round
from arena.storage.rounds import Board, DrawnRound, RoundsRecord

__all__ = [
    "Draw",
    "Rounds",
    "StoredGame",
    "check_rounds_config",
    "is_disqualified",
    "most_pairings",
    "round_of",
]


class StoredGame(msgspec.Struct, frozen=True, array_like=True):
    """What the draw needs of a stored game (in stored order)."""

    key: str
    player0: str
    player1: str
    score: float
    faulty: int | None


@dataclass(frozen=True)
class Draw:
    """Every pair task drawn so far, the record of the draw, and whether the
    tournament is over (every round drawn and settled)."""

    tasks: list[PairTask]
    record: RoundsRecord
    finished: bool

    @property
    def current_round(self) -> int:
        return len(self.record.drawn)


_ROUND_RE = re.compile(r"^r(\d+)")


def round_of(key: str) -> int:
    """The round of a game or pair key (``r3:a:b/1`` -> 3); 0 if it names none."""
    match = _ROUND_RE.match(key)
    return int(match[1]) if match else 0


def is_disqualified(faults: Faults, games: int, faulted: int) -> bool:
    """The ``[faults]`` rule on one entrant's totals (the tournament's rule too)."""
    if not faults.restart and faulted > 0:
        return True
    return (
        faults.disqualify_after is not None
        and games >= faults.min_games
        and faulted / games >= faults.disqualify_after
    )


def check_rounds_config(c: TournamentConfig) -> tuple[str, str] | None:
    """(key, problem) of a swiss or knockout file that cannot be played, else ``None``."""
    n = len(c.bots)
    if c.challengers:
        return "challengers", "only a gauntlet has challengers"
    if n < 2:
        return "bots", f"a {c.format} needs at least two bots"
    if c.format == "swiss":
        if c.seeds or c.seed_from or c.ratings:
            return "seeds", "seeds and seed_from are for a knockout; a swiss draws its order"
        return None
    if c.rounds is not None:
        return "rounds", "a knockout's rounds follow from its size; leave rounds out"
    if c.seed_from == "ratings" and c.ratings is None:
        return "ratings", "seed_from = 'ratings' needs ratings = 'file of arena ratings --json'"
    return None


def most_pairings(c: TournamentConfig) -> int:
    """Pairings (of ``games_per_pairing`` games) the tournament can play at most."""
    n = len(c.bots)
    if c.format == "swiss":
        return (c.rounds or default_rounds(n)) * (n // 2)
    extra = c.extra_pairs * 2 / max(c.games_per_pairing, 2)
    return math.ceil((n - 1) * (1 + extra))


class Rounds:
    """The draw of one swiss or knockout tournament (see the module docstring)."""

    def __init__(
        self,
        config: TournamentConfig,
        *,
        game: Game | None = None,
        opening_source: Callable[[int], str] | None = None,
    ) -> None:
        self.config = config
        self.game = game or get_game(config.game)
        self.names = [bot.name for bot in config.bots]
        self.pairs = max(1, config.games_per_pairing // 2)
        n = len(self.names)
        if config.format == "swiss":
            self.entrants = initial_order(self.names, config.seed)
            self.rounds = config.rounds or default_rounds(n)
            self.slots = self.rounds * (n // 2) * self.pairs
        else:
            self.entrants = list(config.seeds) or list(self.names)
            self.size = bracket_size(n)
            self.rounds = int(math.log2(self.size))
            self.per_match = self.pairs + config.extra_pairs
            self.slots = (self.size - 1) * self.per_match
        if opening_source is None:
            openings = draw_openings(config, self.slots, self.game)
            opening_source = openings.__getitem__
        self.opening = opening_source
        self._pairings: dict[tuple[object, ...], Drawn] = {}
        self.withdrawn: frozenset[str] = frozenset()
        """Entrants out from round 1 on: those that could not start at this run's
        pre-flight (``arena run --skip-broken``), never paired, as the disqualified."""

    def total_games(self) -> int:
        """Games the tournament plays if nobody is disqualified and no match is tied."""
        n = len(self.names)
        if self.config.format == "swiss":
            return self.rounds * (n // 2) * 2 * self.pairs
        return (n - 1) * 2 * self.pairs

    def fingerprint(self) -> str:
        """What makes two runs' games comparable (cf. ``schedule_fingerprint``)."""
        c = self.config
        relevant = {
            "format": c.format,
            "entrants": self.entrants,
            "rounds": self.rounds,
            "pairs": self.pairs,
            "extra_pairs": c.extra_pairs if c.format == "knockout" else 0,
            "openings": [self.opening(i) for i in range(self.slots)],
            "game": self.game.name,
            "variant": c.variant,
            "faults": c.faults,
            "tc": c.tc,
            "bot_tc": {bot.name: bot.tc for bot in c.bots if bot.tc is not None},
            "max_plies": c.max_plies,
        }
        return hashlib.sha256(msgspec.json.encode(relevant, order="sorted")).hexdigest()

    # ------------------------------------------------------------------ drawing

    def draw(self, games: Sequence[StoredGame]) -> Draw:
        """Replay the draw over ``games`` (every stored game, in stored order)."""
        state = _Replay(self, games)
        if self.config.format == "swiss":
            return state.swiss()
        return state.knockout()

    def pair(self, active: list[str], scores: SwissScores) -> Drawn:
        """:func:`pair_round`, remembered: every draw replays the rounds before it, and
        a matching of a large field takes seconds (the answer depends on these inputs
        alone, so a remembered one is the same)."""
        key = (
            tuple(active),
            tuple(sorted(scores.points.items())),
            tuple(sorted(scores.byes.items())),
            tuple(sorted((tuple(sorted(k)), v) for k, v in scores.met.items())),
        )
        drawn = self._pairings.get(key)
        if drawn is None:
            drawn = self._pairings[key] = pair_round(active, self.entrants, scores)
        return drawn

    def task(self, index: int, key: str, round_: int, a: str, b: str) -> PairTask:
        return PairTask(
            index=index,
            key=key,
            round=round_,
            a=a,
            b=b,
            opening=self.opening(index),
            game=self.game.name,
            variant=self.config.variant,
        )


class _Replay:
    """One pass of :meth:`Rounds.draw`."""

    def __init__(self, rounds: Rounds, games: Sequence[StoredGame]) -> None:
        self.r = rounds
        self.games = {g.key: g for g in games}
        self.ordered = list(games)
        self.tasks: list[PairTask] = []
        self.drawn: list[DrawnRound] = []
        self._dq: dict[int, set[str]] = {}

    def disqualified(self, through: int) -> set[str]:
        """Entrants the fault rule disqualified over the games of rounds ≤ ``through``."""
        if through in self._dq:
            return self._dq[through]
        faults = self.r.config.faults
        played: Counter[str] = Counter()
        faulted: Counter[str] = Counter()
        out: set[str] = set(self.r.withdrawn)
        for g in self.ordered:
            if round_of(g.key) > through:
                continue
            for i, name in enumerate((g.player0, g.player1)):
                played[name] += 1
                faulted[name] += g.faulty == i
                if is_disqualified(faults, played[name], faulted[name]):
                    out.add(name)
        self._dq[through] = out
        return out

    def settled(self, task: PairTask) -> bool:
        out = self.disqualified(task.round)
        return all(
            task.game_key(n) in self.games or any(p in out for p in task.players(n)) for n in (1, 2)
        )

    def record(self, finished: bool, champion: str | None = None) -> Draw:
        c = self.r.config
        last = len(self.drawn)
        rec = RoundsRecord(
            format=c.format,
            entrants=list(self.r.entrants),
            rounds=self.r.rounds,
            bye_points=float(2 * self.r.pairs) if c.format == "swiss" else 0.0,
            pairs=self.r.pairs,
            extra_pairs=c.extra_pairs if c.format == "knockout" else 0,
            drawn=self.drawn,
            withdrawn=sorted(self.disqualified(last)),
            champion=champion,
        )
        return Draw(self.tasks, rec, finished)

    # ------------------------------------------------------------------ swiss

    def swiss(self) -> Draw:
        r = self.r
        n = len(r.names)
        scores = SwissScores()
        for number in range(1, r.rounds + 1):
            out = self.disqualified(number - 1)
            active = [p for p in r.entrants if p not in out]
            drawn = r.pair(active, scores)
            boards = []
            round_tasks = []
            for board, (a, b) in enumerate(drawn.pairings):
                keys = []
                for p in range(r.pairs):
                    key = f"r{number}:{a}:{b}" if r.pairs == 1 else f"r{number}.{p + 1}:{a}:{b}"
                    index = ((number - 1) * (n // 2) + board) * r.pairs + p
                    round_tasks.append(r.task(index, key, number, a, b))
                    keys.append(key)
                boards.append(Board(a=a, b=b, pair_keys=keys))
            if drawn.bye is not None:
                boards.append(Board(a=drawn.bye, b=None, winner=drawn.bye, how="bye"))
            self.tasks += round_tasks
            self.drawn.append(DrawnRound(number=number, boards=boards))
            if not all(self.settled(t) for t in round_tasks):
                return self.record(False)
            for a, b in drawn.pairings:
                scores.pairing(a, b)
            if drawn.bye is not None:
                scores.bye(drawn.bye, 2.0 * r.pairs)
            for t in round_tasks:
                for key in t.game_keys:
                    g = self.games.get(key)
                    if g is not None:
                        scores.game(g.player0, g.player1, g.score)
        return self.record(True)

    # ------------------------------------------------------------------ knockout

    def knockout(self) -> Draw:
        r = self.r
        seed = seeded(r.entrants)
        n = len(r.entrants)
        current: list[str | None] = [
            r.entrants[s - 1] if s <= n else None for s in bracket_order(r.size)
        ]
        ordinal = 0
        for number in range(1, r.rounds + 1):
            out_before = self.disqualified(number - 1)
            out_now = self.disqualified(number)
            boards: list[Board] = []
            winners: list[str | None] = []
            open_ = False
            for m in range(len(current) // 2):
                a, b = current[2 * m], current[2 * m + 1]
                base = ordinal * r.per_match
                ordinal += 1
                if a is None or b is None:
                    w = a if b is None else b
                    boards.append(Board(a=w, b=None, winner=w, how="bye"))
                    winners.append(w)
                    continue
                if a in out_before or b in out_before:
                    w = _walkover(a, b, out_before, seed)
                    boards.append(Board(a=a, b=b, winner=w, how="walkover"))
                    winners.append(w)
                    continue
                board, winner = self._match(number, m, a, b, base, out_now, seed)
                boards.append(board)
                winners.append(winner)
                open_ = open_ or winner is None
            self.drawn.append(DrawnRound(number=number, boards=boards))
            if open_:
                self._later_rounds(number, len(current) // 2)
                return self.record(False)
            current = winners
        return self.record(True, champion=current[0])

    def _match(
        self,
        number: int,
        m: int,
        a: str,
        b: str,
        base: int,
        out: set[str],
        seed: dict[str, int],
    ) -> tuple[Board, str | None]:
        """Board and winner (``None`` while undecided) of the match of ``a`` and ``b``."""
        r = self.r
        keys: list[str] = []
        pairs = r.pairs
        while True:
            while len(keys) < pairs:
                j = len(keys) + 1
                key = f"r{number}m{m + 1}.{j}:{a}:{b}"
                self.tasks.append(r.task(base + j - 1, key, number, a, b))
                keys.append(key)
            tasks = self.tasks[-len(keys) :]
            if not all(self.settled(t) for t in tasks):
                return Board(a=a, b=b, pair_keys=keys), None
            if a in out or b in out:
                w = _walkover(a, b, out, seed)
                return Board(a=a, b=b, pair_keys=keys, winner=w, how="walkover"), w
            points = [0.0, 0.0]
            faults = [0, 0]
            for t in tasks:
                for key in t.game_keys:
                    g = self.games[key]
                    mine = g.score if g.player0 == a else 1.0 - g.score
                    points[0] += mine
                    points[1] += 1.0 - mine
                    if g.faulty is not None:
                        faults[0 if (g.player0, g.player1)[g.faulty] == a else 1] += 1
            tied = points[0] == points[1]
            if tied and pairs < r.per_match:
                pairs += 1
                continue
            w, how = decide(a, b, (points[0], points[1]), (faults[0], faults[1]), seed)
            return Board(a=a, b=b, pair_keys=keys, winner=w, how=how), w

    def _later_rounds(self, number: int, matches: int) -> None:
        for later in range(number + 1, self.r.rounds + 1):
            matches //= 2
            self.drawn.append(
                DrawnRound(number=later, boards=[Board(a=None, b=None) for _ in range(matches)])
            )


def _walkover(a: str, b: str, out: set[str], seed: dict[str, int]) -> str:
    if (a in out) != (b in out):
        return b if a in out else a
    return a if seed[a] < seed[b] else b
