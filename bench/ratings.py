"""Rating list at scale: 500 tournaments, 200 players, 1,000,000 games.

Synthesises the stores once (the real ``Store.open`` makes each one's schema and
tournament row; games are bulk-inserted rows of the same schema, each a full
``GameRecord`` of a 40-ply single round with the bots' identities), then times,
each in a fresh process so that peak memory is that run's:

1. the first run (no cache: every store read, every fit made);
2. a second run with nothing changed;
3. an incremental run after one more tournament is stored.

    .venv/bin/python bench/ratings.py [--dir DIR] [--tournaments N]

Targets (issue 24): the first run under 10 s and 1 GB, the incremental one under 1 s.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import msgspec

from arena.match.record import ActionRecord, GameRecord
from arena.storage.store import DB_NAME, Store

PLAYERS = 200
PER_TOURNAMENT = 10
GAMES = 2000


def _config(name: str, entries: list[str]) -> str:
    bots = "".join(f'[[bots]]\nname = "{e}"\ncommand = "builtin:random"\n' for e in entries)
    return f'name = "{name}"\nvariant = "single"\ntc = "10+0.1"\n{bots}'


def make_store(root: Path, index: int, strength: list[float], rng: random.Random) -> None:
    name = f"t{index:04d}"
    chosen = rng.sample(range(PLAYERS), PER_TOURNAMENT)
    entries = {p: f"e{p}-{index % 7}" for p in chosen}  # entry names vary between tournaments
    text = _config(name, list(entries.values()))
    directory = root / name
    with Store.open(directory, name=name, config_text=text, fingerprint=name):
        pass
    actions = [ActionRecord(i % 2, "a1-b2", 5 + i, False) for i in range(40)]
    encoder = msgspec.json.Encoder()
    pairs = [(a, b) for a in chosen for b in chosen if a != b]
    start = 1.7e9 + index * 86400.0
    rows = []
    for g in range(GAMES):
        a, b = pairs[g % len(pairs)]
        p = 1 / (1 + 10 ** (-(strength[a] - strength[b] + 30) / 400))
        u = rng.random()
        score = 1.0 if u < p * 0.9 else 0.5 if u < p * 0.9 + 0.1 else 0.0
        record = GameRecord(
            game="kamisado",
            variant="single",
            players=[entries[a], entries[b]],
            opening="kamisado single",
            actions=actions,
            score=score,
            reason="home-row",
            final_position="x" * 120,
            time_control="10+0.1",
            identities=[
                {"name": f"bot{a}", "author": "bench", "version": "1"},
                {"name": f"bot{b}", "author": "bench", "version": "1"},
            ],
            started_at=start + g,
            ended_at=start + g + 1,
        )
        rows.append(
            (
                f"r{g // 2}:{entries[a]}:{entries[b]}/{g % 2 + 1}",
                f"r{g // 2}",
                entries[a],
                entries[b],
                score,
                "home-row",
                None,
                40,
                start + g,
                start + g + 1,
                "2026-01-01T00:00:00+00:00",
                encoder.encode(record).decode(),
            )
        )
    conn = sqlite3.connect(directory / DB_NAME)
    conn.execute("PRAGMA synchronous=OFF")
    with conn:
        conn.executemany("INSERT INTO games VALUES (?,?,?,?,?,?,?,?,?,?,?,?)", rows)
    conn.close()


def synthesise(root: Path, tournaments: int) -> None:
    marker = root / f".complete-{tournaments}"
    if marker.exists():
        return
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    rng = random.Random(24)
    strength = [rng.gauss(0, 200) for _ in range(PLAYERS)]
    (root.parent / f"{root.name}-strength.json").write_text(json.dumps(strength))
    t0 = time.perf_counter()
    for i in range(tournaments):
        make_store(root, i, strength, rng)
    print(
        f"synthesised {tournaments} stores, {tournaments * GAMES:,} games "
        f"in {time.perf_counter() - t0:.0f} s"
    )
    marker.touch()


CHILD = """
import json, resource, sys, time
t0 = time.perf_counter()
from arena.ratinglist.fit import build_list
t1 = time.perf_counter()
data = build_list([sys.argv[1]])
elapsed = time.perf_counter() - t0
fit_only = time.perf_counter() - t1
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": elapsed, "build": fit_only, "peak_mb": peak, "games": data.games,
                  "players": sum(len(t.rows) for t in data.tables)}))
"""


def timed(root: Path) -> dict:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(root)], capture_output=True, text=True, check=True
    )
    return json.loads(out.stdout)


def show(what: str, run: dict, note: str = "") -> None:
    print(
        f"{what + ':':17} {run['seconds']:6.2f} s ({run['build']:.2f} s after imports), "
        f"peak {run['peak_mb']:4.0f} MB, {run['games']:,} games, {run['players']} players"
        + (f" ({note})" if note else "")
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=Path("/tmp/arena-bench-ratings"))
    parser.add_argument("--tournaments", type=int, default=500)
    args = parser.parse_args()
    root = args.dir / "results"
    synthesise(root, args.tournaments)
    extra = root / f"t{args.tournaments:04d}"
    shutil.rmtree(extra, ignore_errors=True)
    shutil.rmtree(root / ".ratings-cache", ignore_errors=True)

    first = timed(root)
    show("first run", first, "targets: 10 s, 1 GB")
    show("unchanged rerun", timed(root))
    strength = json.loads((args.dir / "results-strength.json").read_text())
    make_store(root, args.tournaments, strength, random.Random(99))
    show("incremental run", timed(root), "after one more tournament; target: 1 s")
    shutil.rmtree(extra, ignore_errors=True)
    if not math.isfinite(first["seconds"]):
        sys.exit(1)


if __name__ == "__main__":
    main()
