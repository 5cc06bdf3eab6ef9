"""Every benchmark once, with tiny parameters: a bench script that no longer runs
fails here (and so in CI) rather than on the day its figures are wanted.

Benchmarks are not tests and nothing runs them otherwise, so one could rot for
rounds unseen (``bench/tournament.py`` once stopped at its first game). Each
script under ``bench/`` is declared below, in :data:`SMOKE`: the arguments of its
smoke run(s), or, for a script that is not a benchmark itself (a bot a benchmark
starts), the benchmark whose smoke run starts it. A script that is in neither is
a failure, named, as is an entry whose script is gone: adding a benchmark means
adding its smoke run. The figures of a smoke run mean nothing; it runs each
script end to end, in seconds, and fails when the script exits non-zero (an
exception, or one of its own checks: the benchmarks that play games stop when
a game ends by a crash).

One line per run (seconds, ok or FAILED, the command) and per bot (the benchmark
that starts it); a failed run's last lines follow its line. The exit status is
non-zero when any run failed, and the last line names the failed scripts. A run
that needs what the machine lacks (the 'ray' extra, chromium) is skipped with
the reason, and is a failure under ``ARENA_REQUIRE_ALL=1``, as in the tests
(``tests/needs.py``); ``.ci/run`` sets it.

    python bench/smoke.py [-v] [SCRIPT ...]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
TIMEOUT = 300.0
"""Seconds one smoke run may take: minutes more than any needs, less than CI's patience."""
TAIL = 30
"""Lines of a failed run's output shown under its line."""


def module(name: str, hint: str) -> Callable[[], str | None]:
    """A need: the module ``name`` imports (an optional extra); ``hint`` says how to get it."""
    return lambda: None if importlib.util.find_spec(name) else f"needs {name} ({hint})"


def chromium() -> str | None:
    """A need: Debian's chromium, found as ``tests/browser.py`` finds it."""
    path = os.environ.get("ARENA_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    return None if os.path.exists(path) else f"needs chromium (not found at {path})"


@dataclass(frozen=True)
class Run:
    """One smoke run of a script: its arguments, split as a shell would (``{tmp}`` is
    a fresh folder of the run's own, readable by the sandbox's user, removed
    afterwards), and what it needs."""

    args: str
    needs: tuple[Callable[[], str | None], ...] = field(default=())


@dataclass(frozen=True)
class StartedBy:
    """A script that is no benchmark (a bot): the benchmark whose smoke run starts it."""

    script: str


RAY = module("ray", "pip install -e '.[ray]'")
PLAYWRIGHT = module("playwright", "pip install -e '.[test]'")

SMOKE: dict[str, list[Run] | StartedBy] = {
    "analysis.py": [Run("--games 2 --budgets 1 --variants single --keep {tmp}")],
    "baseline_alphabeta.py": StartedBy("ladder.py"),
    "decisions.py": [Run("--matches 1 --time 0.005")],
    "fuzz.py": [Run("--lines 1000 --games-per-pairing 2 --hostile-rate 0.3")],
    "fuzz_bot.py": StartedBy("fuzz.py"),
    "ladder.py": [Run("--games 2 --tc 2+0.02 --bots random greedy bench/baseline_alphabeta.py")],
    "openings.py": [Run("--pairs 1 --tc 2+0.02 --bots random greedy")],
    "overhead.py": [Run("--decisions 50 --rounds 1 --starts 1")],
    "perft.py": [Run("--depth 4 --repeat 1")],
    "ratings.py": [Run("--dir {tmp} --tournaments 3")],
    "remote.py": [Run("--requests 20 --rounds 1 --flood 4 --tls")],
    "report.py": [Run("--sizes 100,200 --keep {tmp}")],
    "scale.py": [Run("--games-per-pairing 2 --repeat 1", needs=(RAY,))],
    "search.py": [Run("--time 0.05"), Run("--time 0.05 --baseline")],
    "startup.py": [Run("--runs 1 --samples 1 --bot-starts 1")],
    "swiss.py": [Run("--smoke")],
    "tournament.py": [Run("--games-per-pairing 2")],
    "web.py": [
        Run(
            "--pages 1 --games-per-pairing 2 --think 0.005 --floor-seconds 1",
            needs=(PLAYWRIGHT, chromium),
        )
    ],
}
"""Every script under ``bench/`` but this one, and how its smoke run goes."""


def scripts(folder: Path) -> list[str]:
    """The scripts of ``folder`` a smoke table must declare (every ``*.py`` but this one)."""
    return sorted(p.name for p in folder.glob("*.py") if p.name != Path(__file__).name)


def problems(folder: Path, table: Mapping[str, list[Run] | StartedBy]) -> dict[str, str]:
    """What is wrong with ``table`` for the scripts of ``folder``, by script: one with
    no entry, an entry whose script is gone, a bot whose benchmark does not start it
    (its name appears neither in that benchmark's source nor in its smoke arguments)."""
    found = scripts(folder)
    out = {name: "no smoke run declared (add one to SMOKE in bench/smoke.py)" for name in found}
    for name, entry in table.items():
        if name not in found:
            out[name] = "declared in SMOKE, but there is no such script"
            continue
        del out[name]
        if isinstance(entry, StartedBy):
            runner = table.get(entry.script)
            source = folder / entry.script
            args = " ".join(run.args for run in runner) if isinstance(runner, list) else ""
            mentioned = source.is_file() and name in source.read_text() or name in args
            if not isinstance(runner, list) or not mentioned:
                out[name] = f"said to be started by {entry.script}, whose smoke run does not"
    return out


def missing(run: Run) -> str | None:
    """Why this machine cannot do ``run``, or ``None``."""
    return next((reason for need in run.needs if (reason := need()) is not None), None)


def execute(folder: Path, name: str, run: Run) -> tuple[bool, str]:
    """Run ``name`` with ``run``'s arguments from the checkout's root (where the
    benchmarks' default paths start); (whether it exited 0, its output)."""
    with tempfile.TemporaryDirectory(prefix=f"arena-smoke-{Path(name).stem}-") as tmp:
        os.chmod(tmp, 0o755)  # a root arena's bots run as nobody: their folders must be readable
        command = [sys.executable, str(folder / name), *shlex.split(run.args.format(tmp=tmp))]
        process = subprocess.Popen(
            command,
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            start_new_session=True,  # a timeout ends the script's whole process group
        )
        try:
            output, _ = process.communicate(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            output, _ = process.communicate()
            return False, f"{output}\nsmoke: no end after {TIMEOUT:g} s; killed"
    return process.returncode == 0, output


def main(
    argv: list[str] | None = None,
    folder: Path = HERE,
    table: Mapping[str, list[Run] | StartedBy] = SMOKE,
) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", metavar="SCRIPT", help="only these (default: all)")
    parser.add_argument("-v", "--verbose", action="store_true", help="every run's output")
    args = parser.parse_args(argv)
    chosen = {n if n.endswith(".py") else f"{n}.py" for n in args.names}
    if unknown := chosen - set(scripts(folder)) - set(table):
        parser.error(f"no such bench script: {', '.join(sorted(unknown))}")
    required = os.environ.get("ARENA_REQUIRE_ALL", "") not in ("", "0")
    failed: list[str] = []
    ran = 0
    start = time.monotonic()
    for name, problem in problems(folder, table).items():
        if not chosen or name in chosen:
            print(f"{'':>7}  FAILED   {name}: {problem}", flush=True)
            failed.append(name)
    for name, entry in table.items():
        if chosen and name not in chosen or name in failed:
            continue
        if isinstance(entry, StartedBy):
            print(f"{'':>7}  {'-':7}  {name}: a bot, started by {entry.script}'s run", flush=True)
            continue
        for run in entry:
            shown = f"{name} {run.args}".rstrip()
            reason = missing(run)
            if reason is not None:
                verdict = "FAILED" if required else "skipped"
                print(f"{'':>7}  {verdict:7}  {shown}: {reason}", flush=True)
                if required and name not in failed:
                    failed.append(name)
                continue
            began = time.monotonic()
            ok, output = execute(folder, name, run)
            ran += 1
            print(f"{time.monotonic() - began:6.1f}s  {'ok' if ok else 'FAILED':7}  {shown}")
            if not ok or args.verbose:
                lines = output.rstrip("\n").splitlines()
                print(
                    "".join(f"    | {line}\n" for line in lines[-TAIL if not ok else 0 :]), end=""
                )
            sys.stdout.flush()
            if not ok and name not in failed:
                failed.append(name)
    took = f"{time.monotonic() - start:.0f} s"
    if failed:
        print(f"smoke: FAILED: {', '.join(failed)} ({ran} runs in {took})")
        return 1
    print(f"smoke: every bench script ran ({ran} runs in {took})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
