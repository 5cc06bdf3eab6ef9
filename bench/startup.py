"""Start-up: seconds from the spawn of ``arena run`` to its first stored game.

Runs ``arena run examples/quick.toml`` (the README's quick start) in a fresh
results folder several times and polls ``games.sqlite`` (read-only, every
few milliseconds) for its first row; prints each run's figure and the median.
The built-in bots' compiled search is prepared once before the timed runs (the
JIT cache and the module compiled ahead of time), so the figure is the start-up
of an arena whose cache is built (the goal: under 1 s). Beside it, what the
figure is made of: the preparation's own cost on a built cache (``prepare``),
the arena's own steps each timed in a fresh process (the imports of ``arena
run``; those of a spawned worker, which only a replacement pays now that
``arena run`` forks its workers; the sandbox's set-up: its ``/etc`` view and its
probe), the same tournament with instant bots only (the arena's own start-up
and its first games), and one sandboxed start of each compiled bot up to its
handshake answer (``bot start``). Last, the pre-flight (``arena/backends/preflight.py``):
every entrant of the file started at once, as ``arena run`` does before its first game,
against the same entrants started one after another in the same process (the slowest
of them, and their sum): started together they should cost about the slowest one.

    python bench/startup.py [--runs 5] [--file examples/quick.toml] [--workers N]
                            [--samples 5] [--bot-starts 3]
    python bench/startup.py --preflight-only [--runs 5] [--file examples/quick.toml]
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARENA = [sys.executable, "-c", "from arena.cli import main; main()"]
DEADLINE = 120.0
"""Seconds a run may take to store its first game before the benchmark gives up."""


def first_row(database: Path) -> bool:
    if not database.exists():
        return False
    try:
        with sqlite3.connect(f"file:{database}?mode=ro", uri=True, timeout=0.05) as db:
            return db.execute("SELECT 1 FROM games LIMIT 1").fetchone() is not None
    except sqlite3.Error:  # not created yet, or locked for a moment
        return False


def one_run(file: Path, root: Path, workers: int | None) -> float:
    """Seconds from spawning ``arena run`` to the first row of its store."""
    name = tomllib.loads(file.read_text())["name"]
    database = root / name / "games.sqlite"
    command = [*ARENA, "run", str(file), "--results", str(root), "-q", "--no-report"]
    if workers is not None:
        command += ["--workers", str(workers)]
    start = time.monotonic()
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        while not first_row(database):
            if proc.poll() is not None:
                raise SystemExit(f"arena run ended before storing a game: {proc.stderr.read()!r}")
            if time.monotonic() - start > DEADLINE:
                raise SystemExit(f"no game stored within {DEADLINE:g} s")
            time.sleep(0.002)
        return time.monotonic() - start
    finally:
        proc.kill()
        proc.wait()
        assert proc.stderr is not None
        proc.stderr.close()


def instant_file(file: Path, folder: Path) -> Path:
    """``file`` with every built-in bot replaced by an instant one (random or greedy)."""
    text = file.read_text()
    for slow, fast in (("builtin:mcts", "builtin:random"), ("builtin:alphabeta", "builtin:greedy")):
        text = text.replace(f'"{slow}"', f'"{fast}"')
    name = tomllib.loads(text)["name"]
    text = text.replace(f'name = "{name}"', f'name = "{name}-instant"', 1)
    out = folder / f"{file.stem}-instant.toml"
    out.write_text(text)
    return out


def bot_start_seconds(name: str) -> float:
    """One sandboxed start of built-in ``name``, from spawn to its ``identity``."""
    code = (
        "import time, trio; from arena.engine.bot import Engine; "
        "from arena.engine.config import EngineConfig; "
        "from arena.engine.sandbox import Sandbox; from arena.plan.builtins import "
        f"resolve_builtin\nasync def main():\n"
        f"    async with Engine(EngineConfig(name='b', command=resolve_builtin({name!r}), "
        "sandbox=Sandbox(mode='auto'))) as e:\n"
        "        t = time.monotonic(); await e.start('kamisado', 'standard'); "
        "print(time.monotonic() - t)\ntrio.run(main)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(done.stdout.strip().splitlines()[-1])


def prepare_seconds() -> float:
    """The preparation as ``arena run`` does it, timed in a process of its own."""
    code = (
        "import trio, time; "
        "from arena.plan.prepare import prepare; t = time.monotonic(); "
        "trio.run(prepare, 'alphabeta'); print(time.monotonic() - t)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(done.stdout.strip().splitlines()[-1])


def in_fresh_process(code: str) -> float:
    """Seconds ``code`` takes (timed inside a fresh interpreter, so without its own start)."""
    timed = f"import time\nt = time.perf_counter()\n{code}\nprint(time.perf_counter() - t)"
    done = subprocess.run([sys.executable, "-c", timed], capture_output=True, text=True, check=True)
    return float(done.stdout.strip().splitlines()[-1])


PARTS = {
    "imports of arena run": "import arena.cli.run, arena.tournament",
    "imports of a spawned worker": "import arena.backends.workers",
    "the sandbox's /etc view": "from arena.engine import sandbox\nsandbox.etc_view()",
    "the sandbox's probe": "from arena.engine import sandbox\nsandbox.probe()",
}
"""The arena's own steps before its first bot starts, each timed in a fresh process
(the probe includes the ``/etc`` view it needs)."""


def preflight_figures(file: Path, runs: int) -> None:
    """The pre-flight's seconds on ``file``, and its entrants' starts one at a time."""
    import trio

    from arena.backends.preflight import preflight
    from arena.engine.bot import Engine
    from arena.plan.config import load_config
    from arena.plan.launch import entry_config
    from arena.plan.prepare import prepare

    config = load_config(file)

    async def one_at_a_time() -> list[float]:
        seconds = []
        for bot in config.bots:
            async with Engine(entry_config(config, bot.name)) as engine:
                t = time.perf_counter()
                await engine.start(config.game, config.variant)
                seconds.append(time.perf_counter() - t)
        return seconds

    async def measure() -> tuple[float, list[float]]:
        for bot in config.bots:
            await prepare(bot.builtin)
        result = await preflight(config, config.game)
        broken = [s.line() for s in result.broken]
        if broken:
            raise SystemExit("; ".join(broken))
        return result.seconds, await one_at_a_time()

    together, slowest, total = [], [], []
    for _ in range(runs):
        seconds, each = trio.run(measure)
        together.append(seconds)
        slowest.append(max(each))
        total.append(sum(each))
    at_once, alone, summed = (statistics.median(x) for x in (together, slowest, total))
    print(
        f"pre-flight of {file.name} ({len(config.bots)} entrants at once): {at_once:.3f} s; "
        f"one at a time: slowest {alone:.3f} s, sum {summed:.3f} s; "
        f"pre-flight / slowest start {at_once / alone:.2f} (medians of {runs} runs)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--file", type=Path, default=ROOT / "examples" / "quick.toml")
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--samples", type=int, default=5, help="fresh processes per part")
    parser.add_argument("--bot-starts", type=int, default=3, help="starts per built-in bot")
    parser.add_argument(
        "--preflight-only", action="store_true", help="Only the pre-flight's figures."
    )
    args = parser.parse_args()
    if args.preflight_only:
        preflight_figures(args.file.resolve(), args.runs)
        return
    first = prepare_seconds()  # builds the cache if it is not built
    again = prepare_seconds()
    print(f"prepare: first call {first:.3f} s, with the cache built {again:.3f} s")
    print("load average before the runs: {:.2f} {:.2f} {:.2f}".format(*os.getloadavg()))
    for label, code in PARTS.items():
        times = [in_fresh_process(code) for _ in range(args.samples)]
        median = statistics.median(times)
        print(f"arena: {label} {median:.3f} s (median of {args.samples}, min {min(times):.3f})")
    for name in ("alphabeta", "mcts"):
        starts = [bot_start_seconds(name) for _ in range(args.bot_starts)]
        print(f"bot start: {name} answers hello {statistics.median(starts):.3f} s after spawn")
    with tempfile.TemporaryDirectory(prefix="arena-startup-") as tmp:
        os.chmod(tmp, 0o755)
        instant = instant_file(args.file.resolve(), Path(tmp))
        for label, file in (("instant bots only", instant), (args.file.name, args.file.resolve())):
            figures = []
            for i in range(args.runs):
                seconds = one_run(file, Path(tmp) / f"{file.stem}-{i}", args.workers)
                figures.append(seconds)
                print(f"{label}, run {i + 1}: first game stored {seconds:.3f} s after the spawn")
            print(
                f"{label}: first game stored, median {statistics.median(figures):.3f} s over "
                f"{args.runs} runs (min {min(figures):.3f}, max {max(figures):.3f}); goal < 1 s"
            )
    preflight_figures(args.file.resolve(), args.runs)


if __name__ == "__main__":
    main()
