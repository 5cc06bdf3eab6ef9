"""How well a Swiss finds the best: the share of tournaments whose top three are
the true top three, for a Swiss of ⌈log₂ n⌉ + 2 rounds, a round robin cut to the
same number of games, and a full round robin, with the games each used.

The field is n entrants of known strength: Elo 0, −step, −2·step, ... (the
built-in bots at different handicaps stand in for such a ladder). Games are
*simulated* from those Elo ratings (a logistic win probability, a small share of
draws, each pairing two games with sides swapped) rather than played, so that a
few hundred tournaments take seconds: what is measured is the format, not the
bots. The Swiss is drawn by the arena's own pairing (``arena/plan/swiss.py``)
and ranked by the report's standings (points, Buchholz, Sonneborn–Berger, direct
encounter: ``arena/report/rounds.py``); the round robins rank by points, ties
broken at random.

    python bench/swiss.py              # 16 and 32 entrants, 100 tournaments each
    python bench/swiss.py --smoke      # seconds: 16 entrants, 10 tournaments
"""

from __future__ import annotations

import math
import random
import time

import click

from arena.plan.swiss import SwissScores, default_rounds, initial_order, pair_round
from arena.report.rounds import build_rounds
from arena.storage.rounds import Board, DrawnRound, RoundsRecord

DRAW_SHARE = 0.05


def play(rng: random.Random, elo_a: float, elo_b: float) -> float:
    """One simulated game: a's points."""
    expected = 1 / (1 + 10 ** ((elo_b - elo_a) / 400))
    if rng.random() < DRAW_SHARE:
        return 0.5
    return 1.0 if rng.random() < (expected - DRAW_SHARE / 2) / (1 - DRAW_SHARE) else 0.0


def swiss(names: list[str], elo: dict[str, float], rounds: int, rng: random.Random, seed: int):
    order = initial_order(names, seed)
    scores = SwissScores()
    drawn = []
    games: dict[str, tuple[str, str, float]] = {}
    count = 0
    for number in range(1, rounds + 1):
        d = pair_round(order, order, scores)
        boards = []
        for a, b in d.pairings:
            key = f"r{number}:{a}:{b}"
            for n, (p0, p1) in enumerate(((a, b), (b, a)), 1):
                s = play(rng, elo[p0], elo[p1])
                games[f"{key}/{n}"] = (p0, p1, s)
                scores.game(p0, p1, s)
                count += 1
            scores.pairing(a, b)
            boards.append(Board(a=a, b=b, pair_keys=[key]))
        if d.bye is not None:
            scores.bye(d.bye, 2.0)
            boards.append(Board(a=d.bye, b=None, winner=d.bye, how="bye"))
        drawn.append(DrawnRound(number=number, boards=boards))
    record = RoundsRecord(
        format="swiss", entrants=order, rounds=rounds, bye_points=2.0, drawn=drawn
    )
    ranked = [row.player for row in build_rounds(record, games, {}).swiss]
    return ranked, count


def circle(names: list[str]) -> list[list[tuple[str, str]]]:
    slots: list[str | None] = list(names) + ([None] if len(names) % 2 else [])
    n = len(slots)
    out = []
    for _ in range(n - 1):
        out.append([(x, y) for i in range(n // 2) if (x := slots[i]) and (y := slots[n - 1 - i])])
        slots = [slots[0], slots[-1], *slots[1:-1]]
    return out


def round_robin(names: list[str], elo: dict[str, float], rounds: int, rng: random.Random):
    shuffled = list(names)
    rng.shuffle(shuffled)
    points = dict.fromkeys(names, 0.0)
    count = 0
    for pairs in circle(shuffled)[:rounds]:
        for a, b in pairs:
            for p0, p1 in ((a, b), (b, a)):
                s = play(rng, elo[p0], elo[p1])
                points[p0] += s
                points[p1] += 1 - s
                count += 1
    tiebreak = {p: rng.random() for p in names}
    return sorted(names, key=lambda p: (-points[p], tiebreak[p])), count


@click.command()
@click.option("--entrants", "-n", multiple=True, type=int, help="Field sizes (default 16 and 32).")
@click.option("--trials", default=100, show_default=True, help="Tournaments per format.")
@click.option("--step", default=40.0, show_default=True, help="Elo between neighbours.")
@click.option("--seed", default=1, show_default=True)
@click.option("--smoke", is_flag=True, help="A few seconds: 16 entrants, 10 tournaments.")
def main(entrants: tuple[int, ...], trials: int, step: float, seed: int, smoke: bool) -> None:
    sizes = list(entrants) or ([16] if smoke else [16, 32])
    if smoke:
        trials = 10
    print(
        f"Simulated games (Elo ladder, {step:g} Elo apart, {DRAW_SHARE:.0%} draws); "
        f"{trials} tournaments per row; 'top 3' = the true best three are the first three."
    )
    for n in sizes:
        names = [f"e{i:02d}" for i in range(n)]
        elo = {name: -step * i for i, name in enumerate(names)}
        top = set(names[:3])
        rounds = default_rounds(n)
        rows = []
        formats = [
            (f"swiss, {rounds} rounds", "swiss", rounds),
            (f"round robin cut to {rounds} rounds", "rr", rounds),
            (f"full round robin, {n - 1} rounds", "rr", n - 1),
        ]
        for label, kind, length in formats:
            hits = 0
            firsts = 0
            games = 0
            start = time.perf_counter()
            for t in range(trials):
                rng = random.Random(f"{seed}:{n}:{t}")
                if kind == "swiss":
                    ranked, used = swiss(names, elo, length, rng, seed * 100_000 + t)
                else:
                    ranked, used = round_robin(names, elo, length, rng)
                hits += set(ranked[:3]) == top
                firsts += ranked[0] == names[0]
                games = used
            share = hits / trials
            half = 1.96 * math.sqrt(share * (1 - share) / trials)
            rows.append((label, games, share, half, firsts / trials, time.perf_counter() - start))
        print(f"\n{n} entrants")
        print(
            f"  {'format':<34} {'games':>6} {'top 3 on top':>14} {'best first':>11} {'seconds':>8}"
        )
        for label, games, share, half, first, secs in rows:
            print(
                f"  {label:<34} {games:>6} {share:>8.0%} ±{half:>4.0%} {first:>11.0%} {secs:>8.1f}"
            )


if __name__ == "__main__":
    main()
