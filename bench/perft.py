"""Perft benchmark: perft(5) from the Kamisado start position, leaves per second.

Prints the figure with bulk counting at the last ply (how perft is usually
timed, and what ``arena perft`` does) and, for comparison in the same run, with
every leaf made and unmade. Target: perft(5) under 1 s (>= 0.9 M leaves/s).

    python bench/perft.py [--depth 5] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time

from arena.games.kamisado import Position, perft


def perft_full(pos: Position, depth: int) -> int:
    """Perft that plays every leaf, to show what bulk counting saves."""
    if depth == 0:
        return 1
    if pos.phase != 0:
        return 0
    total = 0
    for move in pos.legal_moves():
        pos.make(move)
        total += 1 if depth == 1 else perft_full(pos, depth - 1)
        pos.unmake()
    return total


def timed(func, depth: int, repeat: int) -> tuple[int, float]:
    best = float("inf")
    count = 0
    for _ in range(repeat):
        pos = Position.start()
        start = time.perf_counter()
        count = func(pos, depth)
        best = min(best, time.perf_counter() - start)
    return count, best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--depth", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    for label, func in (("bulk-counted", perft), ("every leaf made", perft_full)):
        count, seconds = timed(func, args.depth, args.repeat)
        print(
            f"perft({args.depth}) {label:>16}: {count} leaves in {seconds:.3f} s "
            f"= {count / seconds / 1e6:.2f} M leaves/s (best of {args.repeat})"
        )
    print("target: perft(5) in under 1 s, >= 0.9 M leaves/s")


if __name__ == "__main__":
    main()
