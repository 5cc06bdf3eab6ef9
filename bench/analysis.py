"""Analysis throughput: positions solved per second per core, and the share of
positions proven, for single rounds and for marathons.

Games are played by the built-in bots with the arena itself (``arena run``,
short time controls, 2-ply random openings): greedy against random (rounds
full of blunders, decided early) and alphabeta against mcts (closer rounds).
Each tournament is then analysed in one worker process (``--workers 1``: the
figure is per core) at each budget, with a fresh ``analysis.sqlite`` and a
fresh process each time, so no solver table carries over between budgets.

    python bench/analysis.py [--games 20] [--budgets 5,20,100] [--keep DIR]
                             [--variants single,marathon]

Playing the games is not timed; the analysis is the measurement: on a shared
machine, play the games once (``--keep DIR``), then run the measurement alone
(under whatever lock the machine's users share) with the same ``--keep DIR``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PAIRINGS = {"greedy-random": ("greedy", "random"), "alphabeta-mcts": ("alphabeta", "mcts")}
VARIANTS = ("single", "marathon")
TC = {"single": "2+0.02", "marathon": "10+0.05"}


def tournament_file(
    folder: Path, name: str, variant: str, bots: tuple[str, str], games: int
) -> Path:
    toml = folder / f"{name}.toml"
    toml.write_text(
        f'name = "{name}"\nvariant = "{variant}"\ntc = "{TC[variant]}"\n'
        f"games_per_pairing = {games}\nseed = 5\n[openings]\nplies = 2\n"
        + "".join(f'[[bots]]\nname = "{b}"\ncommand = "builtin:{b}"\n' for b in bots)
    )
    return toml


def play(folder: Path, games: int, variants: list[str]) -> list[Path]:
    """Every (variant, pairing) tournament, played unless already stored."""
    out = []
    for variant in variants:
        for label, bots in PAIRINGS.items():
            name = f"{variant}-{label}"
            results = folder / "results" / name
            if not (results / "games.sqlite").is_file():
                toml = tournament_file(folder, name, variant, bots, games)
                command = [sys.executable, "-m", "arena.cli", "run", str(toml), "-q", "--no-report"]
                subprocess.run(
                    [*command, "--results", str(folder / "results")],
                    check=True,
                    stdout=subprocess.DEVNULL,
                )
            out.append(results)
    return out


MEASURE = """
import json, sys, time
from arena.analysis.run import analyse
start = time.monotonic()
outcome = analyse(sys.argv[1], float(sys.argv[2]), workers=1)
print(json.dumps({"seconds": time.monotonic() - start, "games": outcome.analysed,
                  "positions": outcome.positions, "proven": outcome.proven}))
"""


def measure(results: Path, budget: float) -> dict[str, float]:
    """One analysis of ``results`` at ``budget`` ms in a fresh process (solver loaded
    before the clock starts: the process warms it, then analyses)."""
    for suffix in ("", "-wal", "-shm"):
        (results / f"analysis.sqlite{suffix}").unlink(missing_ok=True)
    warm = "from arena.games import get_game; g = get_game('kamisado'); g.solve(g.new_state(), 1)\n"
    done = subprocess.run(
        [sys.executable, "-c", warm + MEASURE, str(results), str(budget)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--games", type=int, default=20, help="games per pairing")
    parser.add_argument("--budgets", default="5,20,100", help="ms per position, comma-separated")
    parser.add_argument("--keep", type=Path, default=None, help="folder for the games (reused)")
    parser.add_argument("--variants", default=",".join(VARIANTS), help="comma-separated")
    args = parser.parse_args()
    variants = args.variants.split(",")
    if unknown := set(variants) - set(VARIANTS):
        parser.error(
            f"--variants: {', '.join(sorted(unknown))} is not one of {', '.join(VARIANTS)}"
        )
    folder = args.keep or Path(tempfile.mkdtemp(prefix="bench-analysis-"))
    folder.mkdir(parents=True, exist_ok=True)
    start = time.monotonic()
    tournaments = play(folder, args.games, variants)
    print(f"games in {folder} ({time.monotonic() - start:.0f} s to play what was missing)")
    print(f"load average {os.getloadavg()[0]:.2f}; one worker process (per core)")
    print("tournament                  budget  games  positions  proven  seconds  positions/s")
    for results in tournaments:
        for budget in (float(b) for b in args.budgets.split(",")):
            r = measure(results, budget)
            share = 100 * r["proven"] / r["positions"] if r["positions"] else 0.0
            rate = r["positions"] / r["seconds"] if r["seconds"] else 0.0
            print(
                f"{results.name:26s} {budget:5g} ms  {r['games']:5.0f}  {r['positions']:9.0f}"
                f"  {share:5.1f}%  {r['seconds']:7.1f}  {rate:11.0f}"
            )
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
