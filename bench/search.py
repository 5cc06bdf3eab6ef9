"""Search benchmark: alphabeta's nodes per second and depth from a few fixed positions.

Not a test: it prints figures to compare before and after a change to the
search or the evaluation. Each position is searched with a fresh table for
``--time`` seconds (iterative deepening, as in a game).

    python bench/search.py [--time 1.0] [--baseline]

``--baseline`` measures ``bench/baseline_alphabeta.py`` (the issue-15 start,
pure Python); without it, the compiled search of ``bots/alphabeta_bot.py``
(its kernels are loaded, or compiled, before the clock starts).
"""

from __future__ import annotations

import argparse
import importlib.util
import time
from pathlib import Path

from arena.bots.compiled_search import CompiledSearcher, warm_up

from arena.games.kamisado.notation import move_to_text, text_to_position

POSITIONS = {
    "standard start (free choice)": "obvpyrgn/8/8/8/8/8/8/NGRYPVBO b - standard 0-0 1 -",
    "after c1-c5": "obvpyrgn/8/8/2R5/8/8/8/NG1YPVBO g b standard 0-0 1 -",
    "middle game": "1bv1yrgn/8/o1R5/P5p1/8/8/8/NG1Y1VBO b g standard 0-0 1 -",
    "sumo round": "o+bvpyrgn/8/8/8/3R4/8/8/NG1YPVBO+ g y standard 1-1 3 -",
    "forced win (single)": "2vpyrgn/4P3/3b4/o7/8/5V2/8/NGRY2BO b r single 0-0 1 -",
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--time", type=float, default=1.0, help="seconds per position")
    parser.add_argument("--baseline", action="store_true", help="the baseline searcher")
    args = parser.parse_args()
    searcher_class: type = CompiledSearcher
    if args.baseline:
        path = Path(__file__).with_name("baseline_alphabeta.py")
        spec = importlib.util.spec_from_file_location("baseline_alphabeta", path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        searcher_class = module.Searcher
    else:
        warm_up()
    total_nodes = 0
    total_time = 0.0
    print(f"{'position':30} {'depth':>5} {'nodes':>9} {'time s':>7} {'nodes/s':>9}  best")
    for name, text in POSITIONS.items():
        pos = text_to_position(text)
        searcher = searcher_class()
        start = time.perf_counter()
        move, value, depth = searcher.think(pos, time.monotonic() + args.time)
        elapsed = time.perf_counter() - start
        total_nodes += searcher.nodes
        total_time += elapsed
        rate = searcher.nodes / elapsed if elapsed else 0.0
        print(
            f"{name:30} {depth:5d} {searcher.nodes:9d} {elapsed:7.2f} {rate:9,.0f}  "
            f"{move_to_text(move)} ({value:+d})"
        )
    print(f"{'all':30} {'':5} {total_nodes:9d} {total_time:7.2f} {total_nodes / total_time:9,.0f}")


if __name__ == "__main__":
    main()
