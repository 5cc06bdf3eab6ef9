"""Ladder check of the built-in bots: a round robin through the real arena (not a test).

Every pairing plays ``--games`` standard matches from seeded random openings, in
pairs with colours swapped on the same opening, two games at a time (a trio
nursery bounded by a CapacityLimiter). Prints a score table; the expected ranking
is random < greedy < {mcts, alphabeta}. Any fault (time, crash, illegal,
protocol) is counted and printed, because a ladder won by forfeits proves nothing.

    python bench/ladder.py [--games 40] [--tc 1+0.05] [--concurrency 2] [--seed 1]
"""

from __future__ import annotations

import argparse
import itertools
import random
import time
from collections import Counter, defaultdict

import trio

from arena.clock import TimeControl
from arena.engine import Engine, EngineConfig
from arena.games import get_game
from arena.record import FAULT_REASONS, GameRecord
from arena.referee import play_game
from bots import resolve_builtin

BOTS = ("random", "greedy", "mcts", "alphabeta")


async def play_pair(
    names: tuple[str, str],
    opening_seed: int,
    args: argparse.Namespace,
    limiter: trio.CapacityLimiter,
    out: list[GameRecord],
) -> None:
    """Two games on one opening, colours swapped, with fresh engines."""
    game = get_game("kamisado")
    control = TimeControl.parse(args.tc)
    opening = game.random_opening(args.variant, args.plies, random.Random(opening_seed))
    async with limiter:
        configs = [
            EngineConfig(name=n, command=[*resolve_builtin(n), "--seed", str(opening_seed + i)])
            for i, n in enumerate(names)
        ]
        async with Engine(configs[0]) as a, Engine(configs[1]) as b:
            for engines in ((a, b), (b, a)):
                record = await play_game(
                    game, opening, list(engines), [control, control], variant=args.variant
                )
                out.append(record)


def table(records: list[GameRecord], bots: tuple[str, ...]) -> str:
    """A Markdown score table: each cell is the row bot's score against the column bot."""
    points: dict[tuple[str, str], float] = defaultdict(float)
    games: Counter[tuple[str, str]] = Counter()
    for r in records:
        p0, p1 = r.players
        points[p0, p1] += r.score
        points[p1, p0] += 1 - r.score
        games[p0, p1] += 1
        games[p1, p0] += 1
    lines = ["| bot | " + " | ".join(bots) + " | total |", "|---" * (len(bots) + 2) + "|"]
    for a in bots:
        cells = []
        total = n_total = 0.0
        for b in bots:
            if a == b or not games[a, b]:
                cells.append("—")
                continue
            pts, n = points[a, b], games[a, b]
            total += pts
            n_total += n
            cells.append(f"{pts:g}/{n} ({100 * pts / n:.0f}%)")
        share = f"{100 * total / n_total:.0f}%" if n_total else "—"
        lines.append(f"| {a} | " + " | ".join(cells) + f" | {total:g}/{n_total:g} ({share}) |")
    return "\n".join(lines)


async def main_async(args: argparse.Namespace) -> None:
    bots = tuple(args.bots)
    limiter = trio.CapacityLimiter(args.concurrency)
    records: list[GameRecord] = []
    pairs = args.games // 2
    start = time.monotonic()
    async with trio.open_nursery() as nursery:
        for k, (a, b) in enumerate(itertools.combinations(bots, 2)):
            for j in range(pairs):
                seed = args.seed * 1_000_003 + k * 10_007 + j
                nursery.start_soon(play_pair, (a, b), seed, args, limiter, records)
    elapsed = time.monotonic() - start
    print(
        f"{len(records)} {args.variant} games at {args.tc}, openings of {args.plies} random "
        f"plies, colours swapped, concurrency {args.concurrency}, {elapsed:.0f} s"
    )
    print()
    print(table(records, bots))
    reasons = Counter(r.reason for r in records)
    print()
    print("end reasons: " + ", ".join(f"{k} {v}" for k, v in reasons.most_common()))
    faults = [r for r in records if r.reason in FAULT_REASONS]
    for r in faults:
        print(f"FAULT {r.players} {r.reason}: {r.detail}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=40, help="games per pairing (even)")
    parser.add_argument("--tc", default="1+0.05")
    parser.add_argument("--variant", default="standard")
    parser.add_argument("--plies", type=int, default=2, help="random opening plies")
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--bots", nargs="+", default=list(BOTS))
    trio.run(main_async, parser.parse_args())


if __name__ == "__main__":
    main()
