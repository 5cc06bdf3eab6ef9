"""Openings comparison: do the generated books make game pairs say more? (not a test)

Plays the same two bots in pairs (one opening, colours swapped) twice: from
seeded random ``--plies`` walks and from an openings book. A pair split 1-1
(each bot won with the same side) says nothing about which bot is stronger;
the book should make fewer such pairs and so a narrower Elo interval for the
same number of games (pentanomial model, as fastchess reports it).

An Elo interval widens as the score leaves 50 %, so a book that lets the
stronger bot win more pairs can widen it while it tells more per pair. The
table therefore also gives normalized Elo (fishtest's nElo: the score excess
over the per-pair standard deviation; its interval is the same for every
book at a given number of pairs, so a larger nElo means more information per
pair) and that standard deviation.

Long runs are split into chunks: ``--start`` skips pairs (pair ``j`` always
takes the same random walk and the same book position for a given ``--seed``),
``--save`` writes a chunk's pair scores, and ``--combine`` prints the table of
saved chunks together.

    python bench/openings.py [--pairs 100] [--tc 5+0.1] [--bots alphabeta mcts]
                             [--book examples/openings/kamisado-standard.txt]
                             [--start 0] [--save chunk.json]
    python bench/openings.py --combine chunk1.json chunk2.json ...
"""

from __future__ import annotations

import argparse
import math
import os
import time
from pathlib import Path

import msgspec
import trio
from ladder import play_pair

from arena.match.record import FAULT_REASONS, GameRecord
from arena.plan.config import read_openings_file
from arena.stats.elo import pentanomial_counts, pentanomial_elo


class Source(msgspec.Struct):
    """One opening source's pairs: the first bot's points in each game of each pair."""

    label: str
    points: list[list[float]]
    faults: int


class Chunk(msgspec.Struct):
    """What ``--save`` writes and ``--combine`` reads."""

    bots: list[str]
    tc: str
    variant: str
    seconds: float
    load: list[float]
    sources: list[Source]


def source(label: str, pairs: list[list[GameRecord]], first: str) -> Source:
    """The pairs as the first bot's points (its side of each game swapped back)."""
    points = [[r.score if r.players[0] == first else 1 - r.score for r in g] for g in pairs]
    faults = sum(r.reason in FAULT_REASONS for games in pairs for r in games)
    return Source(label, points, faults)


def summary(src: Source) -> str:
    """One Markdown row: pairs, share split 1-1, score, Elo ±, nElo ±, per-pair sd (95 %)."""
    totals = [sum(p) for p in src.points]
    splits = sum(len(p) == 2 and p[0] != p[1] and sum(p) == 1 for p in src.points)
    counts = pentanomial_counts(totals)
    stats = pentanomial_elo(counts)
    mean = sum(totals) / len(totals) / 2
    sd = math.sqrt(sum((t / 2 - mean) ** 2 for t in totals) / len(totals))
    return (
        f"| {src.label} | {len(totals)} | {100 * splits / len(totals):.0f}% | "
        f"{100 * stats.score:.1f}% | {stats.elo.value:+.0f} ± {stats.elo.error:.0f} | "
        f"{stats.nelo.value:+.0f} ± {stats.nelo.error:.0f} | {sd:.3f} | {counts} | "
        f"{src.faults} |"
    )


def table(chunks: list[Chunk]) -> str:
    """The Markdown table of every source over all chunks (sources matched by label)."""
    merged: dict[str, Source] = {}
    for chunk in chunks:
        for src in chunk.sources:
            into = merged.setdefault(src.label, Source(src.label, [], 0))
            into.points.extend(src.points)
            into.faults += src.faults
    first = chunks[0].bots[0]
    lines = [
        f"| openings | pairs | pairs split 1–1 | {first}'s score | Elo (95%) | nElo (95%) "
        "| sd per pair | pairs (LL, LD, WL+DD, WD, WW) | faults |",
        "|---|---:|---:|---:|---:|---:|---:|---|---:|",
    ]
    lines += [summary(src) for src in merged.values()]
    return "\n".join(lines)


async def main_async(args: argparse.Namespace) -> None:
    first, second = args.bots
    book = read_openings_file(args.book)
    limiter = trio.CapacityLimiter(args.concurrency)
    runs: dict[str, list[list[GameRecord]]] = {"random": [], "book": []}
    start = time.monotonic()
    async with trio.open_nursery() as nursery:
        for j in range(args.start, args.start + args.pairs):
            seed = args.seed * 1_000_003 + j
            for label, openings in (("random", []), ("book", book)):
                if label not in args.sources:
                    continue
                games: list[GameRecord] = []
                runs[label].append(games)
                nursery.start_soon(play_pair, (first, second), seed, args, openings, limiter, games)
    chunk = Chunk(
        bots=[first, second],
        tc=args.tc,
        variant=args.variant,
        seconds=time.monotonic() - start,
        load=list(os.getloadavg()),
        sources=[
            source(label, runs[key], first)
            for key, label in (
                ("random", f"random {args.plies}-ply"),
                ("book", f"book ({os.path.basename(args.book)})"),
            )
            if runs[key]
        ],
    )
    if args.save:
        Path(args.save).write_bytes(msgspec.json.encode(chunk))
    print(
        f"{first} vs {second}, {args.variant} at {args.tc}, pairs {args.start}.."
        f"{args.start + args.pairs - 1} per opening source (seed {args.seed}), concurrency "
        f"{args.concurrency}, {chunk.seconds:.0f} s, load average "
        + " ".join(f"{x:.1f}" for x in chunk.load)
    )
    print()
    print(table([chunk]))


def combine(paths: list[str]) -> None:
    chunks = [msgspec.json.decode(Path(p).read_bytes(), type=Chunk) for p in paths]
    for path, c in zip(paths, chunks, strict=True):
        print(
            f"{path}: {' vs '.join(c.bots)}, {c.variant} at {c.tc}, {c.seconds:.0f} s, "
            "load average " + " ".join(f"{x:.1f}" for x in c.load)
        )
    print()
    print(table(chunks))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", type=int, default=100, help="pairs per opening source")
    parser.add_argument("--start", type=int, default=0, help="first pair's index (chunks)")
    parser.add_argument("--tc", default="5+0.1")
    parser.add_argument("--variant", default="standard")
    parser.add_argument("--plies", type=int, default=2, help="random opening plies")
    parser.add_argument("--book", default="examples/openings/kamisado-standard.txt")
    parser.add_argument("--concurrency", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--bots", nargs=2, default=["alphabeta", "mcts"])
    parser.add_argument(
        "--sources",
        nargs="+",
        choices=("random", "book"),
        default=["random", "book"],
        help="opening sources to play",
    )
    parser.add_argument("--save", help="write this chunk's pair scores (JSON)")
    parser.add_argument("--combine", nargs="+", metavar="CHUNK", help="print saved chunks")
    args = parser.parse_args()
    if args.combine:
        combine(args.combine)
    else:
        trio.run(main_async, args)


if __name__ == "__main__":
    main()
