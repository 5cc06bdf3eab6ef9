"""Fuzzed lines through a real tournament: 0 arena errors, every game ends with a reason.

Two fuzzing bots (``bench/fuzz_bot.py``) and the built-in random bot play a
round robin through the real ``arena run`` (worker processes included; no
sandbox, so the bots can write their line counts into a temporary folder). Each
fuzzing decision is a burst of benign odd lines the arena must accept; some end
with a hostile line the arena must turn into a fault of that bot. Rounds of
tournaments run until at least ``--lines`` fuzzed lines have been sent. Checked
and printed: the arena's exit status and stderr (no traceback, no worker
error), every game stored with an end reason, and that every fault of a
fuzzing bot follows a hostile line it announced (a benign line must never be
judged a fault).

    python bench/fuzz.py [--lines 100000] [--games-per-pairing 10] [--seed 1]

Figures vary with the machine's load (2 shared cores here): read them as counts,
not speeds.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from arena.match.record import FAULT_REASONS
from arena.storage.store import Store

HERE = Path(__file__).resolve().parent

TOML = """
name = "fuzz-{run}"
variant = "single"
tc = "20+0.5"
games_per_pairing = {games}
concurrency = 2
seed = {seed}
[openings]
plies = 2
[faults]
restart = true
[[bots]]
name = "fuzz1"
command = ["{python}", "{bot}", "{seed}1", "{state}", "{rate}"]
sandbox_rw = ["{state}"]       # the bots count their lines there
[[bots]]
name = "fuzz2"
command = ["{python}", "{bot}", "{seed}2", "{state}", "{rate}"]
sandbox_rw = ["{state}"]
[[bots]]
name = "random"
command = "builtin:random"
"""


def lines_sent(state: Path) -> tuple[int, int]:
    benign = hostile = 0
    for path in state.iterdir():
        parts = path.read_text().split()
        if len(parts) == 2:
            benign += int(parts[0])
            hostile += int(parts[1])
    return benign, hostile


def fuzz(target: int, games: int, seed: int, rate: float, quiet: bool = False) -> dict[str, int]:
    """Run tournaments until ``target`` lines were sent; return the counts.

    Raises ``AssertionError`` on any arena error or unexplained fault.
    """
    totals: Counter[str] = Counter(
        {"arena errors": 0, "unexplained faults": 0, "games without a reason": 0}
    )
    reasons: Counter[str] = Counter()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="arena-fuzz-") as tmp:
        root = Path(tmp)
        state = root / "state"
        state.mkdir()
        run = 0
        while sum(lines_sent(state)) < target:
            run += 1
            toml = root / f"fuzz-{run}.toml"
            toml.write_text(
                TOML.format(
                    run=run,
                    games=games,
                    seed=seed + run,
                    rate=rate,
                    python=sys.executable,
                    bot=HERE / "fuzz_bot.py",
                    state=state,
                )
            )
            result = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "arena.cli",
                    "run",
                    str(toml),
                    "--results",
                    str(root),
                    "-q",
                    "--no-report",
                    "--workers",
                    "2",
                    "--sandbox",
                    "none",
                ],
                capture_output=True,
                text=True,
                timeout=3600,
            )
            broken = any(w in result.stderr for w in ("Traceback", "WorkerError", "arena: error"))
            if result.returncode != 0 or broken:
                totals["arena errors"] += 1
                raise AssertionError(
                    f"arena run {run} failed ({result.returncode}):\n{result.stderr[-3000:]}"
                )
            with Store.open_existing(root / f"fuzz-{run}") as store:
                records = list(store.records())
            for record in records:
                totals["games"] += 1
                reasons[record.reason] += 1
                if not record.reason:
                    totals["games without a reason"] += 1
                if record.reason in FAULT_REASONS and record.faulty is not None:
                    culprit = record.players[record.faulty]
                    tail = record.stderr_tails[record.faulty]
                    if culprit.startswith("fuzz") and "hostile: " not in tail:
                        totals["unexplained faults"] += 1
                        print(f"unexplained: {record.reason} {record.detail}", file=sys.stderr)
                    elif culprit.startswith("fuzz"):
                        kind = tail.rsplit("hostile: ", 1)[1].split()[0]
                        totals[f"hostile {kind} -> {record.reason}"] += 1
                        if record.reason not in ("protocol", "illegal"):
                            print(f"{kind}: {record.reason} {record.detail}", file=sys.stderr)
            if sum(lines_sent(state)) == 0:
                raise AssertionError(
                    f"run {run}: the fuzzing bots sent nothing (can they write {state}?)"
                )
            benign, hostile = lines_sent(state)
            if not quiet:
                print(
                    f"run {run}: {len(records)} games, {benign + hostile} lines so far", flush=True
                )
        benign, hostile = lines_sent(state)
    totals["benign lines"] = benign
    totals["hostile lines"] = hostile
    totals["fuzzed lines"] = benign + hostile
    totals["seconds"] = round(time.monotonic() - started)
    for reason, n in sorted(reasons.items()):
        totals[f"ended by {reason}"] = n
    return dict(sorted(totals.items()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lines", type=int, default=100_000)
    parser.add_argument("--games-per-pairing", type=int, default=10)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--hostile-rate", type=float, default=0.05)
    args = parser.parse_args()
    counts = fuzz(args.lines, args.games_per_pairing, args.seed, args.hostile_rate)
    print(f"load average {os.getloadavg()[0]:.1f} (figures below are counts; time is noisy)")
    for key, value in counts.items():
        print(f"{key:>24}: {value:,}")
    ok = not counts["arena errors"] and not counts["unexplained faults"]
    ok = ok and not counts["games without a reason"]
    print("OK" if ok else "FAILED")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
