"""Report generation at scale: time, peak memory and report sizes for stored
tournaments of 1,000, 10,000 and 100,000 games.

The stores are synthesised directly (real random Kamisado games from the rules
core, 2 % of them faulted, six bots), since playing 100,000 games would take
hours; each report is then written by ``arena.report.write_reports`` in a fresh
process so that its peak memory (``ru_maxrss``) is its own. Targets: report.html
at most 3 MB at every size, time growing at most linearly.

    python bench/report.py [--sizes 1000,10000,100000] [--keep DIR]

Figures are noisy on a shared machine: the load average is printed beside them.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from arena.games import get_game
from arena.match.record import CRASH, ActionRecord, GameRecord
from arena.storage.store import Store

BOTS = ["alpha", "beta", "gamma", "delta", "eps", "zeta"]
TEMPLATES = 64


def random_game(rng: random.Random) -> tuple[str, list[ActionRecord], str, float, str]:
    """A real game of random moves: opening, actions, final position, score, reason."""
    state = get_game("kamisado").new_state("standard")
    opening = state.to_text()
    actions = []
    while not state.is_terminal() and len(actions) < 400:
        legal = state.legal_actions()
        action = rng.choice(legal)
        player = state.current_player()
        state.apply_action(action)
        info = {"depth": rng.randint(1, 9), "score": round(rng.uniform(-1, 1), 2)}
        actions.append(ActionRecord(player, action, rng.randint(0, 40), len(legal) == 1, info))
    outcome = state.outcome()
    score, reason = (outcome.returns[0], outcome.reason) if outcome else (0.5, "adjudicated")
    return opening, actions, state.to_text(), score, reason


def synthesise(directory: Path, games: int, seed: int = 1) -> None:
    rng = random.Random(seed)
    templates = [random_game(rng) for _ in range(TEMPLATES)]
    store = Store.open(directory, name=directory.name, config_text="", fingerprint="bench")
    store._conn.execute("PRAGMA synchronous=OFF")  # a benchmark's scratch store
    now = time.time()
    for i in range(games):
        a, b = rng.sample(BOTS, 2)
        opening, actions, final, score, reason = templates[i % TEMPLATES]
        faulty = None
        detail = ""
        if rng.random() < 0.02:
            faulty = rng.randint(0, 1)
            score, reason, detail = (0.0 if faulty == 0 else 1.0), CRASH, "exit code 1"
            actions = actions[: len(actions) // 2]
        record = GameRecord(
            game="kamisado",
            variant="standard",
            players=[a, b],
            opening=opening,
            actions=actions,
            score=score,
            reason=reason,
            detail=detail,
            faulty=faulty,
            final_position=final,
            time_control="10+0.1",
            stderr_tails=["", "some stderr line\n" if faulty is not None else ""],
            started_at=now + i,
            ended_at=now + i + 0.5,
        )
        store.add_game(f"r{i // 2}:{a}:{b}/{i % 2 + 1}", f"r{i // 2}:{a}:{b}", record)
    store.close()


CHILD = """
import resource, sys, time
from arena.report import write_reports
start = time.perf_counter()
write_reports(sys.argv[1])
print(time.perf_counter() - start, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,100000")
    parser.add_argument("--keep", default=None, help="Folder for the stores (kept; reused).")
    args = parser.parse_args()
    root = Path(args.keep or tempfile.mkdtemp(prefix="arena-bench-report-"))
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())} (noisy figures)")
    print(
        f"{'games':>8} {'synth s':>8} {'report s':>9} {'s/1k games':>10} {'peak MB':>8} "
        f"{'html KB':>8} {'md KB':>7} {'db MB':>7}"
    )
    for size in (int(s) for s in args.sizes.split(",")):
        directory = root / f"t{size}"
        synth = 0.0
        if not (directory / "games.sqlite").exists():
            start = time.perf_counter()
            synthesise(directory, size)
            synth = time.perf_counter() - start
        out = subprocess.run(
            [sys.executable, "-c", CHILD, str(directory)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.split()
        seconds, peak_kb = float(out[0]), int(out[1])
        html = (directory / "report.html").stat().st_size
        md = (directory / "report.md").stat().st_size
        db = (directory / "games.sqlite").stat().st_size
        per_k = 1000 * seconds / size
        print(
            f"{size:>8} {synth:>8.1f} {seconds:>9.2f} {per_k:>10.3f} {peak_kb / 1024:>8.0f} "
            f"{html / 1024:>8.0f} {md / 1024:>7.0f} {db / 2**20:>7.1f}"
        )
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; stores in {root}")


if __name__ == "__main__":
    main()
