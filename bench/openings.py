"""Openings comparison: do the generated books make game pairs say more? (not a test)

Plays the same two bots in pairs (one opening, colours swapped) twice: from
seeded random ``--plies`` walks and from an openings book. A pair split 1-1
(each bot won with the same side) says nothing about which bot is stronger;
the book should make fewer such pairs and so a narrower Elo interval for the
same number of games (pentanomial model, as fastchess reports it).

    python bench/openings.py [--pairs 100] [--tc 5+0.1] [--bots alphabeta mcts]
                             [--book examples/openings/kamisado-standard.txt]
"""

from __future__ import annotations

import argparse
import os
import time

import trio
from ladder import play_pair

from arena.config import read_openings_file
from arena.rating import pentanomial_counts, pentanomial_elo
from arena.record import FAULT_REASONS, GameRecord


def summary(label: str, pairs: list[list[GameRecord]], first: str) -> str:
    """One Markdown row: pairs, share split 1-1, the first bot's score and Elo ± (95 %)."""
    totals = []
    splits = 0
    for games in pairs:
        points = [r.score if r.players[0] == first else 1 - r.score for r in games]
        totals.append(sum(points))
        if len(games) == 2 and points[0] != points[1] and sum(points) == 1:
            splits += 1
    stats = pentanomial_elo(pentanomial_counts(totals))
    faults = sum(r.reason in FAULT_REASONS for games in pairs for r in games)
    return (
        f"| {label} | {len(totals)} | {100 * splits / len(totals):.0f}% | "
        f"{100 * stats.score:.1f}% | {stats.elo.value:+.0f} ± {stats.elo.error:.0f} | "
        f"{pentanomial_counts(totals)} | {faults} |"
    )


async def main_async(args: argparse.Namespace) -> None:
    first, second = args.bots
    book = read_openings_file(args.book)
    limiter = trio.CapacityLimiter(args.concurrency)
    runs: dict[str, list[list[GameRecord]]] = {"random": [], "book": []}
    start = time.monotonic()
    async with trio.open_nursery() as nursery:
        for j in range(args.pairs):
            seed = args.seed * 1_000_003 + j
            for label, source in (("random", []), ("book", book)):
                games: list[GameRecord] = []
                runs[label].append(games)
                nursery.start_soon(play_pair, (first, second), seed, args, source, limiter, games)
    print(
        f"{first} vs {second}, {args.variant} at {args.tc}, {args.pairs} pairs per opening "
        f"source, concurrency {args.concurrency}, {time.monotonic() - start:.0f} s, "
        "load average " + " ".join(f"{x:.1f}" for x in os.getloadavg())
    )
    print()
    print(f"| openings | pairs | pairs split 1–1 | {first}'s score | Elo (95%) "
          "| pairs (LL, LD, WL+DD, WD, WW) | faults |")  # fmt: skip
    print("|---|---:|---:|---:|---:|---|---:|")
    print(summary(f"random {args.plies}-ply", runs["random"], first))
    print(summary(f"book ({os.path.basename(args.book)})", runs["book"], first))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=100, help="pairs per opening source")
    parser.add_argument("--tc", default="5+0.1")
    parser.add_argument("--variant", default="standard")
    parser.add_argument("--plies", type=int, default=2, help="random opening plies")
    parser.add_argument("--book", default="examples/openings/kamisado-standard.txt")
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--bots", nargs=2, default=["alphabeta", "mcts"])
    trio.run(main_async, parser.parse_args())


if __name__ == "__main__":
    main()
