"""Tournament throughput: games per second of a round robin of instant bots.

Runs the same round robin (three built-in random bots, standard matches) at
concurrency 1 and 2 in one process and prints games per second, the speed-up
(target >= 1.8 on 2 cores) and the arena's own CPU share: the arena process's CPU
time (its own and its worker processes') against the bots' CPU time. Then the
concurrency-1 run again with the bubblewrap sandbox off, for the sandbox's cost
per game (one bot start per bot and worker, so it should vanish in the noise).

    python bench/tournament.py [--games-per-pairing 20] [--variant standard]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import trio

from arena.backends.pool import Pool
from arena.backends.slots import InProcessPool
from arena.backends.workers import WorkerPool
from arena.plan.config import parse_config
from arena.tournament import RunOutcome, Tournament

# Three instant bots; also used by bench/scale.py.
TOML = """
name = "{name}"
variant = "{variant}"
tc = "60+1"
games_per_pairing = {games}
concurrency = {concurrency}
seed = 3
[openings]
plies = 2
[[bots]]
name = "r1"
command = "builtin:random"
args = ["--seed", "1"]
[[bots]]
name = "r2"
command = "builtin:random"
args = ["--seed", "2"]
[[bots]]
name = "r3"
command = "builtin:random"
args = ["--seed", "3"]
"""


def cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def check(outcome: RunOutcome, label: str) -> None:
    """Stop unless every game was stored and none ended by a fault: bots that cannot
    start lose every game at once, and the figures would time an arena with nothing to
    play. Also used by bench/scale.py."""
    progress = outcome.progress
    faults = sum(progress.faults.values())
    if not outcome.complete or faults:
        sys.exit(
            f"{label}: {progress.played_now} games played, {faults} ended by a fault "
            f"(end reasons: {dict(progress.reasons)}); nothing measured"
        )


def worker_cpu(pool: Pool | None) -> float:
    """CPU seconds the arena's worker processes spent themselves (not their bots).

    Only local worker processes report theirs; the in-process pool has none. Any
    other pool is refused rather than counted as free: Ray actors are not this
    process's children, so this benchmark's CPU split cannot hold them.
    """
    if isinstance(pool, WorkerPool):
        return pool.worker_cpu
    if pool is None or isinstance(pool, InProcessPool):
        return 0.0
    raise TypeError(f"bench/tournament.py measures local pools only, not {type(pool).__name__}")


def run_once(
    concurrency: int, games: int, variant: str, root: Path, sandbox: str = "auto"
) -> dict[str, float]:
    name = f"bench-{concurrency}-{sandbox}"
    text = TOML.format(name=name, concurrency=concurrency, games=games, variant=variant)
    path = root / f"{name}.toml"
    path.write_text(text)
    tournament = Tournament(
        parse_config(text, path), text, results_root=root, config_path=path, sandbox=sandbox
    )
    mode = tournament.config.sandbox.mode
    self_cpu, child_cpu = cpu(resource.RUSAGE_SELF), cpu(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    outcome = trio.run(tournament.run)
    wall = time.perf_counter() - start
    tournament.close()
    check(outcome, name)
    workers = worker_cpu(tournament.pool)
    arena = cpu(resource.RUSAGE_SELF) - self_cpu + workers
    bots = cpu(resource.RUSAGE_CHILDREN) - child_cpu - workers
    return {
        "games": outcome.progress.played_now,
        "wall": wall,
        "rate": outcome.progress.played_now / wall,
        "arena_cpu": arena,
        "bots_cpu": bots,
        "sandbox": mode,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games-per-pairing", type=int, default=20)
    parser.add_argument("--variant", default="standard")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        results = {}
        for concurrency in (1, 2):
            r = run_once(concurrency, args.games_per_pairing, args.variant, Path(tmp))
            results[concurrency] = r
            share = r["arena_cpu"] / (r["arena_cpu"] + r["bots_cpu"])
            print(
                f"concurrency {concurrency} (sandbox {r['sandbox']}): {r['games']} games in "
                f"{r['wall']:.2f} s = "
                f"{r['rate']:.1f} games/s; arena CPU {r['arena_cpu']:.2f} s "
                f"({r['arena_cpu'] / r['games'] * 1000:.1f} ms/game), bots CPU "
                f"{r['bots_cpu']:.2f} s, arena share {100 * share:.0f}%"
            )
        off = run_once(1, args.games_per_pairing, args.variant, Path(tmp), sandbox="none")
    ratio = results[2]["rate"] / results[1]["rate"]
    print(f"speed-up at concurrency 2: {ratio:.2f}x (target >= 1.8 on 2 cores)")
    on = results[1]
    ms_on, ms_off = (r["arena_cpu"] / r["games"] * 1000 for r in (on, off))
    print(
        f"sandbox {on['sandbox']} vs none at concurrency 1: {on['rate']:.1f} vs "
        f"{off['rate']:.1f} games/s ({on['rate'] / off['rate']:.2f}x), arena CPU "
        f"{ms_on:.1f} vs {ms_off:.1f} ms/game; load average {os.getloadavg()[0]:.2f} "
        f"on {os.cpu_count()} CPUs (noisy)"
    )


if __name__ == "__main__":
    main()
