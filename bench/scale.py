"""Scale-out cost: the same round robin on the local runner and on a Ray cluster of 1 and 3 nodes.

Plays one round robin of three built-in random bots (``bench/tournament.py``'s)
these ways and prints games per second for each:

* local-1  — every game in this process (``workers = 1``)
* local-3  — three worker processes (``arena/backends/workers.py``), three game slots
* ray-1n   — a one-node Ray cluster (1 CPU): one actor, one game slot
* ray-3n   — a three-node Ray cluster (a head and two workers on 127.0.0.1,
  1 CPU each, ``ray.cluster_utils.Cluster``): three actors, one slot each

The cluster is started once (its start-up is printed on its own); each Ray run
reports its actor start-up (placing the actors and checking every node, up to
the first checked actor) separately, and the per-game overhead Ray adds is
printed twice: against the local runner with as many slots, with and without
that start-up. Each configuration runs ``--repeat`` times and the fastest run
is the figure: on a shared machine the slower runs measure the neighbours, not
the backend. Three nodes on a machine with fewer cores share them: the figure
then says what the arena costs, not what a real cluster gains. Needs the 'ray'
extra.

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
from typing import Any

import trio

from arena.plan.config import parse_config
from arena.tournament import Tournament

sys.path.insert(0, str(Path(__file__).parent))
from tournament import TOML, check  # noqa: E402  (the same round robin as bench/tournament.py)

POOLS = {
    ("local", 1): "InProcessPool",
    ("local", 2): "WorkerPool",
    ("ray", 1): "RayPool",
    ("ray", 2): "RayPool",
}
"""The pool each configuration must play on, by backend and one or more slots."""

Figure = tuple[int, float, float]
"""(games played, wall seconds, actor start-up seconds) of one run."""


def run_once(label: str, backend: str, slots: int, games: int, variant: str, root: Path) -> Figure:
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
    check(outcome, label)
    pool: Any = tournament.pool
    expected = POOLS[backend, min(slots, 2)]
    if type(pool).__name__ != expected:  # the figure is of the pool its label names
        sys.exit(f"{label}: played on {type(pool).__name__}, not {expected}")
    startup = getattr(pool, "startup_seconds", 0.0)
    if backend == "ray":
        assert len(pool.nodes) == slots, f"{label}: actors on {len(pool.nodes)} nodes"
    return outcome.progress.played_now, wall, startup


def best(runs: list[Figure]) -> Figure:
    return min(runs, key=lambda figure: figure[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games-per-pairing", type=int, default=100)
    parser.add_argument("--variant", default="standard")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print("load average before: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))

    import ray
    from ray.cluster_utils import Cluster

    from arena.backends.rayconnect import init_ray

    results: dict[str, Figure] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)

        def measure(label: str, backend: str, slots: int) -> None:
            runs = [
                run_once(f"{label}-{i}", backend, slots, args.games_per_pairing, args.variant, root)
                for i in range(args.repeat)
            ]
            results[label] = best(runs)

        measure("local-1", "local", 1)
        measure("local-3", "local", 3)
        start = time.perf_counter()
        cluster = Cluster(
            initialize_head=True,
            head_node_args={
                "num_cpus": 1,
                "node_ip_address": "127.0.0.1",
                "include_dashboard": False,
            },
        )
        try:
            init_ray(ray, cluster.address, log_to_driver=False, logging_level=logging.WARNING)
            print(f"one-node cluster up and joined: {time.perf_counter() - start:.2f} s")
            measure("ray-1n", "ray", 1)
            start = time.perf_counter()
            for _ in range(2):
                cluster.add_node(num_cpus=1, node_ip_address="127.0.0.1")
            cluster.wait_for_nodes()
            print(f"two more nodes up: {time.perf_counter() - start:.2f} s")
            measure("ray-3n", "ray", 3)
        finally:
            ray.shutdown()
            cluster.shutdown()

    for label, (games, wall, startup) in results.items():
        extra = f" (of which {startup:.2f} s actor start-up and node check)" if startup else ""
        print(f"{label:8} {games:4d} games in {wall:6.2f} s: {games / wall:7.1f} games/s{extra}")

    def rate(label: str) -> float:
        games, wall, _ = results[label]
        return games / wall

    def per_game_ms(label: str, *, steady: bool = False) -> float:
        games, wall, startup = results[label]
        return 1000 * (wall - (startup if steady else 0.0)) / games

    print("load average after: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    print(f"ray-1n / local-1: {rate('ray-1n') / rate('local-1'):.2f} of the local rate")
    print(f"ray-3n / local-3: {rate('ray-3n') / rate('local-3'):.2f} of the local rate")
    print(f"ray-3n / ray-1n:  {rate('ray-3n') / rate('ray-1n'):.2f}x (from one node to three)")
    for ray_label, local_label in (("ray-1n", "local-1"), ("ray-3n", "local-3")):
        local, ray_all = per_game_ms(local_label), per_game_ms(ray_label)
        ray_steady = per_game_ms(ray_label, steady=True)
        print(
            f"overhead of {ray_label} against {local_label}: {ray_all - local:+.2f} ms of wall "
            f"time per game ({local:.2f} -> {ray_all:.2f} ms); {ray_steady - local:+.2f} ms at "
            "steady state (actor start-up left out; target under 1 ms)"
        )


if __name__ == "__main__":
    main()
