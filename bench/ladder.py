"""Ladder check of the built-in bots: a round robin through the real arena (not a test).

Every pairing plays ``--games`` matches, in pairs with colours swapped on the
same opening (seeded random ``--plies`` walks, or positions drawn from an
``--openings`` book), ``--concurrency`` games at a time. Prints a score table,
each bot's time per decision and share of its clock used per game (what a
time manager is judged by), and every fault: a ladder won by forfeits proves
nothing, so time forfeits are counted and listed. Any other fault (a crash,
an illegal action, a bad line) ends the run with a non-zero status: a broken
bot, not a figure.

    python bench/ladder.py [--games 40] [--tc 1+0.05] [--concurrency 2] [--seed 1]
                           [--openings examples/openings/kamisado-standard.txt]
"""

from __future__ import annotations

import argparse
import itertools
import os
import random
import statistics
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import trio

from arena.engine.bot import Engine
from arena.engine.config import EngineConfig
from arena.games import get_game
from arena.games.base import State
from arena.match.clock import TimeControl
from arena.match.record import FAULT_REASONS, TIME, GameRecord
from arena.match.referee import play_game
from arena.plan.builtins import resolve_builtin
from arena.plan.config import read_openings_file
from arena.plan.prepare import prepare

BOTS = ("random", "greedy", "mcts", "alphabeta")
ROOT = Path(__file__).resolve().parent.parent
"""The checkout this script belongs to: its bots are the ones measured, even when
another copy of the project is installed (bots run with a scrubbed environment)."""


def opening_for(args: argparse.Namespace, seed: int, book: list[str]) -> State:
    """The pair's opening: a book position chosen by ``seed``, or a seeded random walk."""
    game = get_game("kamisado")
    if book:  # consecutive seeds take consecutive positions: no repeats in a short run
        return game.state_from_text(book[seed % len(book)])
    return game.random_opening(args.variant, args.plies, random.Random(seed))


def command(name: str, seed: int) -> list[str]:
    """A built-in's command line, or a script path (``bench/baseline_alphabeta.py``)."""
    if name.endswith(".py"):  # bots start in a folder of their own: the path made absolute
        return [sys.executable, str(Path(name).resolve()), "--seed", str(seed)]
    return [*resolve_builtin(name), "--seed", str(seed)]


async def play_pair(
    names: tuple[str, str],
    opening_seed: int,
    args: argparse.Namespace,
    book: list[str],
    limiter: trio.CapacityLimiter,
    out: list[GameRecord],
) -> None:
    """Two games on one opening, colours swapped, with fresh engines."""
    game = get_game("kamisado")
    control = TimeControl.parse(args.tc)
    opening = opening_for(args, opening_seed, book)
    async with limiter:
        configs = [
            EngineConfig(
                name=n, command=command(n, opening_seed + i), env={"PYTHONPATH": str(ROOT)}
            )
            for i, n in enumerate(names)
        ]
        for n in names:  # the built-in searching bots' cache, before their games
            await prepare(None if n.endswith(".py") else n)
        async with Engine(configs[0]) as a, Engine(configs[1]) as b:
            for engines in ((a, b), (b, a)):
                record = await play_game(
                    game,
                    opening.clone(),
                    list(engines),
                    [control, control],
                    variant=args.variant,
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


def clock_use(records: list[GameRecord], bots: tuple[str, ...], tc: str) -> str:
    """Per bot: decisions asked, ms per decision (mean, max), share of the clock per game.

    The share is time used over time given (base plus one increment per own
    decision): the figure a time manager aims at, whatever the game's length.
    """
    control = TimeControl.parse(tc)
    per_decision: dict[str, list[int]] = defaultdict(list)
    shares: dict[str, list[float]] = defaultdict(list)
    flags: Counter[str] = Counter()
    for r in records:
        for player, name in enumerate(r.players):
            mine = [a.ms for a in r.actions if a.player == player and not a.forced]
            per_decision[name] += mine
            if control.movetime is not None:
                given = control.movetime * len(mine)
            else:
                given = control.base + control.increment * len(mine)
            if mine and given:
                shares[name].append(sum(mine) / 1000 / given)
        if r.reason == TIME and r.faulty is not None:
            flags[r.players[r.faulty]] += 1
    lines = [
        "| bot | decisions | ms/decision mean | max | clock used per game: mean | min | max "
        "| time forfeits |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name in bots:
        ms, sh = per_decision[name], shares[name]
        if not ms:
            continue
        lines.append(
            f"| {name} | {len(ms)} | {statistics.fmean(ms):.0f} | {max(ms)} "
            f"| {100 * statistics.fmean(sh):.0f}% | {100 * min(sh):.0f}% | {100 * max(sh):.0f}% "
            f"| {flags[name]} |"
        )
    return "\n".join(lines)


async def main_async(args: argparse.Namespace) -> None:
    bots = tuple(args.bots)
    book = read_openings_file(args.openings) if args.openings else []
    limiter = trio.CapacityLimiter(args.concurrency)
    records: list[GameRecord] = []
    pairs = args.games // 2
    start = time.monotonic()
    async with trio.open_nursery() as nursery:
        for k, (a, b) in enumerate(itertools.combinations(bots, 2)):
            for j in range(pairs):
                seed = args.seed * 1_000_003 + k * 10_007 + j
                nursery.start_soon(play_pair, (a, b), seed, args, book, limiter, records)
    elapsed = time.monotonic() - start
    source = f"openings from {args.openings}" if book else f"openings of {args.plies} random plies"
    print(
        f"{len(records)} {args.variant} games at {args.tc}, {source}, colours swapped, "
        f"concurrency {args.concurrency}, {elapsed:.0f} s, load average "
        + " ".join(f"{x:.1f}" for x in os.getloadavg())
    )
    print()
    print(table(records, bots))
    print()
    print(clock_use(records, bots, args.tc))
    reasons = Counter(r.reason for r in records)
    print()
    print("end reasons: " + ", ".join(f"{k} {v}" for k, v in reasons.most_common()))
    faults = [r for r in records if r.reason in FAULT_REASONS]
    for r in faults:
        print(f"FAULT {r.players} {r.reason}: {r.detail}")
    broken = [r for r in faults if r.reason != TIME]
    if broken:  # a time forfeit is a figure of the time manager; a crash is a broken bot
        sys.exit(f"ladder: {len(broken)} games ended by a crash or a bad line: nothing measured")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=40, help="games per pairing (even)")
    parser.add_argument("--tc", default="1+0.05")
    parser.add_argument("--variant", default="standard")
    parser.add_argument("--plies", type=int, default=2, help="random opening plies")
    parser.add_argument("--openings", default=None, help="an openings file instead")
    parser.add_argument("--concurrency", type=int, default=2)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--bots", nargs="+", default=list(BOTS))
    trio.run(main_async, parser.parse_args())


if __name__ == "__main__":
    main()
