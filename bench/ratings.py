"""Rating list at scale: 500 tournaments, 200 players, 1,000,000 games.

Synthesises the stores once (the real ``Store.open`` makes each one's schema and
tournament row; each game is a full ``GameRecord`` of a 40-ply single round with
the bots' identities, stored as ``Store.add_game`` stores it: ``game_row`` and
``insert_game``, only many to a transaction), then times, each in a fresh
process so that peak memory is that run's:

1. the first run (no cache: every store read, every fit made), with the stores'
   pages dropped from the OS cache first (``posix_fadvise(DONTNEED)`` on each
   ``games.sqlite``; ``--warm`` keeps them): stores written over weeks are not
   in memory when the list is first made;
2. a second run with nothing changed;
3. an incremental run after one more tournament is stored;
4. the same incremental run as ``arena ratings`` end to end (the command, the
   table printed, ratings.md and ratings.html written), for reference.

    .venv/bin/python bench/ratings.py [--dir DIR] [--tournaments N] [--baseline TREE] [--warm]

``--baseline TREE`` (another version's tree holding its ``arena`` package, e.g.
``git archive main arena | tar -x -C /tmp/main``) times that version on the same
stores first, and the ratios are printed. Times include starting Python and
importing (the second figure is after the imports). Targets (issue 24): the
first run under 10 s and 1 GB, the incremental one under 1 s.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from arena.match.record import ActionRecord, GameRecord
from arena.storage.store import DB_NAME, SCHEMA_VERSION, Store, game_row, insert_game

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
        key = f"r{g // 2}:{entries[a]}:{entries[b]}/{g % 2 + 1}"
        rows.append(game_row(key, f"r{g // 2}", record))
    conn = sqlite3.connect(directory / DB_NAME)
    conn.execute("PRAGMA synchronous=OFF")
    with conn:
        for row in rows:
            insert_game(conn, row)
    conn.close()


def synthesise(root: Path, tournaments: int) -> None:
    marker = root / f".complete-{tournaments}-schema-{SCHEMA_VERSION}"
    if marker.exists():
        return
    if root.exists() and any(root.glob(".complete-*")):
        sys.exit(f"{root} holds stores of another schema or size; give another --dir")
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
import arena
ratings = {f"{t.slug}/{r.player}": r.rating for t in data.tables for r in t.rows}
print(json.dumps({"seconds": elapsed, "build": fit_only, "peak_mb": peak, "games": data.games,
                  "players": sum(len(t.rows) for t in data.tables), "arena": arena.__file__,
                  "ratings": ratings}))
"""

TARGETS = {"first run": (10.0, 1024.0), "incremental run": (1.0, None)}


def timed(root: Path, tree: Path | None, cli: bool = False) -> dict:
    """One run in a fresh process; ``tree``'s arena instead of this one's (first on
    the path, and the working folder: ``-c`` and ``-m`` put that first too)."""
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(tree), env.get("PYTHONPATH")]))
    where = {"env": env, "cwd": tree or root.parent, "capture_output": True, "text": True}
    if cli:
        out_dir = root.parent / "cli-out"
        out_dir.mkdir(exist_ok=True)  # an older arena wants it made
        command = [sys.executable, "-m", "arena.cli", "ratings", str(root), "--out", str(out_dir)]
        t0 = time.perf_counter()
        subprocess.run(command, check=True, **where)  # type: ignore[call-overload]
        seconds = time.perf_counter() - t0
        return {"seconds": seconds, "build": math.nan, "peak_mb": math.nan}
    out = subprocess.run([sys.executable, "-c", CHILD, str(root)], check=True, **where)  # type: ignore[call-overload]
    run = json.loads(out.stdout)
    if tree is not None and not run["arena"].startswith(str(tree)):
        sys.exit(f"the baseline run imported {run['arena']}, not {tree}'s arena")
    return run


def drop_from_os_cache(root: Path) -> None:
    """Ask the kernel to forget these stores' pages (only theirs: a hint, no root)."""
    for db in root.glob(f"*/{DB_NAME}"):
        fd = os.open(db, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def show(what: str, run: dict) -> None:
    target = TARGETS.get(what)
    verdict = ""
    if target is not None:
        seconds, mb = target
        met = run["seconds"] < seconds and (mb is None or run["peak_mb"] < mb)
        limits = f"{seconds:g} s" + (f", {mb:g} MB" if mb else "")
        verdict = f"  target {limits}: {'met' if met else 'MISSED'}"
    if math.isnan(run["build"]):
        print(f"  {what + ':':17} {run['seconds']:6.2f} s")
        return
    print(
        f"  {what + ':':17} {run['seconds']:6.2f} s ({run['build']:.2f} s after imports), "
        f"peak {run['peak_mb']:4.0f} MB, {run['games']:,} games, {run['players']} players" + verdict
    )


def sequence(root: Path, tournaments: int, tree: Path | None, warm: bool) -> dict[str, dict]:
    """First run, unchanged rerun, incremental run (after one more tournament)."""
    extra = root / f"t{tournaments:04d}"
    shutil.rmtree(extra, ignore_errors=True)
    shutil.rmtree(root / ".ratings-cache", ignore_errors=True)
    if not warm:
        drop_from_os_cache(root)
    runs = {"first run": timed(root, tree), "unchanged rerun": timed(root, tree)}
    strength = json.loads((root.parent / "results-strength.json").read_text())
    make_store(root, tournaments, strength, random.Random(99))
    runs["incremental run"] = timed(root, tree)
    shutil.rmtree(extra, ignore_errors=True)
    timed(root, tree)  # back to the 500 (the cache forgets the extra store)
    make_store(root, tournaments, strength, random.Random(99))
    runs["... arena ratings"] = timed(root, tree, cli=True)
    shutil.rmtree(extra, ignore_errors=True)
    shutil.rmtree(root / ".ratings-cache", ignore_errors=True)
    for what, run in runs.items():
        show(what, run)
    return runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dir", type=Path, default=Path("/tmp/arena-bench-ratings"))
    parser.add_argument("--tournaments", type=int, default=500)
    parser.add_argument("--baseline", type=Path, help="a tree whose arena is timed first")
    parser.add_argument("--warm", action="store_true", help="keep the stores in the OS cache")
    args = parser.parse_args()
    root = args.dir / "results"
    synthesise(root, args.tournaments)
    first = "first run" + ("" if args.warm else " (stores dropped from the OS cache)")
    base = None
    if args.baseline is not None:
        print(f"baseline ({args.baseline}), {first}:")
        base = sequence(root, args.tournaments, args.baseline.resolve(), args.warm)
    print(f"this tree ({Path(__file__).resolve().parent.parent}), {first}:")
    runs = sequence(root, args.tournaments, None, args.warm)
    if base is not None:
        print("speed-up over the baseline (its time / this one's):")
        for what, run in runs.items():
            print(f"  {what + ':':17} {base[what]['seconds'] / run['seconds']:6.1f}x")
        for what in ("first run", "incremental run"):
            mine, theirs = runs[what]["ratings"], base[what]["ratings"]
            if mine.keys() != theirs.keys() or runs[what]["games"] != base[what]["games"]:
                print(f"  {what}: the two rated different games or players!")
                continue
            worst = max(abs(mine[p] - theirs[p]) for p in mine)
            print(
                f"  {what}: the same {len(mine)} players; ratings differ by {worst:.1e} Elo at most"
            )
    missed = [
        what
        for what, (seconds, mb) in TARGETS.items()
        if runs[what]["seconds"] >= seconds or (mb is not None and runs[what]["peak_mb"] >= mb)
    ]
    print("targets: " + ("all met" if not missed else f"missed: {', '.join(missed)}"))


if __name__ == "__main__":
    main()
