"""Scale-out cost: the same round robin on the local runner and on Ray, in one run.

Plays one round robin of three built-in random bots four ways and prints games
per second for each:

* local, 1 slot   — every game in this process (``workers = 1``)
* local, 2 slots  — two worker processes (``arena/workers.py``)
* ray, 1 actor    — one Ray actor with one game slot
* ray, 2 actors   — two Ray actors with one game slot each

then the ratios (Ray against local at the same number of slots, and Ray's
speed-up from 1 to 2 actors) and the per-game overhead Ray adds: the extra wall
time per game against the local runner with as many slots. Ray is started once,
before the timed runs (its start-up is printed on its own); actor start-up and
the per-node bot check are part of each timed run, as in a real tournament.
Each configuration runs ``--repeat`` times and the fastest run is the figure:
on a shared machine the slower runs measure the neighbours, not the backend.
Needs the 'ray' extra.

    python bench/scale.py [--games-per-pairing 100] [--variant standard] [--repeat 3]
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

import trio

from arena.config import parse_config
from arena.tournament import Tournament

sys.path.insert(0, str(Path(__file__).parent))
from tournament import TOML  # noqa: E402  (the same round robin as bench/tournament.py)

RUNS = [
    # label, backend, slots (= concurrency = worker processes or actors)
    ("local-1", "local", 1),
    ("local-2", "local", 2),
    ("ray-1", "ray", 1),
    ("ray-2", "ray", 2),
]


def run_once(
    label: str, backend: str, slots: int, games: int, variant: str, root: Path
) -> tuple[int, float, float]:
    """(games played, wall seconds, Ray start-up seconds) of one fresh tournament."""
    text = TOML.format(name=f"scale-{label}", variant=variant, games=games, concurrency=slots)
    path = root / f"{label}.toml"
    path.write_text(text)
    tournament = Tournament(
        parse_config(text, path),
        text,
        results_root=root / "results",
        config_path=path,
        workers=slots,
        backend=backend,
    )
    start = time.perf_counter()
    outcome = trio.run(tournament.run)
    wall = time.perf_counter() - start
    tournament.close()
    assert outcome.complete, f"{label}: not every game was stored"
    startup = getattr(tournament.pool, "startup_seconds", 0.0)
    return outcome.progress.played_now, wall, startup


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games-per-pairing", type=int, default=100)
    parser.add_argument("--variant", default="standard")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print("load average before: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))

    import ray

    start = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             logging_level=logging.WARNING)  # fmt: skip
    print(f"ray.init (local instance, 2 CPUs): {time.perf_counter() - start:.2f} s")
    results: dict[str, tuple[int, float, float]] = {}
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for round_ in range(args.repeat):
                for label, backend, slots in RUNS:
                    games, wall, startup = run_once(
                        f"{label}-{round_}", backend, slots, args.games_per_pairing,
                        args.variant, Path(tmp),
                    )  # fmt: skip
                    if label not in results or wall < results[label][1]:
                        results[label] = (games, wall, startup)
        for label, (games, wall, startup) in results.items():
            extra = f" (of which {startup:.2f} s actor start-up and bot check)" if startup else ""
            print(f"{label:8} {games:4d} games in {wall:6.2f} s: "
                  f"{games / wall:7.1f} games/s{extra}")  # fmt: skip
    finally:
        ray.shutdown()

    def rate(label: str) -> float:
        games, wall, _ = results[label]
        return games / wall

    def per_game_ms(label: str, *, steady: bool = False) -> float:
        games, wall, startup = results[label]
        return 1000 * (wall - (startup if steady else 0.0)) / games

    print("load average after: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    print(f"ray-1 / local-1: {rate('ray-1') / rate('local-1'):.2f} of the local rate")
    print(f"ray-2 / local-2: {rate('ray-2') / rate('local-2'):.2f} of the local rate")
    print(f"ray-2 / ray-1:   {rate('ray-2') / rate('ray-1'):.2f}x (speed-up from a second actor)")
    print(f"local-2 / local-1: {rate('local-2') / rate('local-1'):.2f}x")
    for n in (1, 2):
        local, ray_all = per_game_ms(f"local-{n}"), per_game_ms(f"ray-{n}")
        ray_steady = per_game_ms(f"ray-{n}", steady=True)
        print(f"overhead Ray adds with {n} slot(s): {ray_all - local:+.2f} ms of wall time per "
              f"game ({local:.2f} -> {ray_all:.2f} ms); {ray_steady - local:+.2f} ms without "
              "actor start-up")  # fmt: skip


if __name__ == "__main__":
    main()
