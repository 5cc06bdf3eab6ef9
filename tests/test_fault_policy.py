"""One fault policy on every backend: ``[faults]`` decides which games a bot plays,
and how many are counted skipped, the same in the arena's own process, in worker
processes and on Ray actors (the real ``arena run``, a bot that exits at its first decision)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import needs
import pytest
from procs import wait_none_with

from arena.storage.store import Store

BAD_BOT = Path(__file__).parent / "bad_bot.py"

BACKENDS = {
    "in-process": ["--workers", "1"],
    "workers": ["--workers", "2"],
    "ray": ["--workers", "2", "--backend", "ray"],
}


# A bot that thinks a little per move: a game of two of them outlasts a game
# whose bot exits at its first decision, so no slot gets to crashy's next pair task before
# crashy's fault is known.
THINKER = """
import random, sys, time
from arena.sdk import run
rng = random.Random(int(sys.argv[1]))
def choose(request):
    time.sleep(0.03)
    return rng.choice(request.legal)
run(choose, name="thinker")
"""


POLICIES = {
    # [faults] table -> the game of crashy after which it is out
    "no-restart": ("restart = false", 1),
    "share": ("disqualify_after = 0.5\nmin_games = 3", 3),
}


def _tournament(tmp_path: Path, faults: str) -> Path:
    # 3 pairings x 3 pair tasks, in this order: r1:a:b, r1:crashy:b, r1:crashy:a, r2:...
    # Two games at once: crashy's first game runs beside the first game of a and b.
    bot = tmp_path / "thinker.py"
    bot.write_text(THINKER)
    toml = tmp_path / "t.toml"
    toml.write_text(
        'name = "policy"\nvariant = "single"\ntc = "5+0.1"\ngames_per_pairing = 6\n'
        f"concurrency = 2\nseed = 5\n[faults]\n{faults}\n"
        # crashy passes the pre-flight and exits at its first decision.
        f'[[bots]]\nname = "crashy"\ncommand = ["{sys.executable}", "{BAD_BOT}", "exit"]\n'
        f'[[bots]]\nname = "a"\ncommand = ["{sys.executable}", "{bot}", "1"]\n'
        f'[[bots]]\nname = "b"\ncommand = ["{sys.executable}", "{bot}", "2"]\n'
    )
    return toml


@pytest.mark.parametrize("policy", list(POLICIES))
@pytest.mark.parametrize("backend", list(BACKENDS))
def test_a_crashing_bot_is_out_after_the_same_games_on_every_backend(
    tmp_path: Path, backend: str, policy: str
) -> None:
    """``restart = false`` puts the bot that exits at its first decision out with its first fault;
    ``disqualify_after = 0.5`` with ``min_games = 3`` with its third game. It plays
    the games started before that game ended (the game beside it in the other
    slot, when both slots happen to start one at once: Ray's actors take their
    batches in no fixed order) and no other; the rest are skipped and counted as
    such, wherever the games run. (Worker processes and actors used to play every
    game of the pair tasks they held, and only the arena's dispatch counted
    skipped games, never its own slots.) A second run resumes: the bot is still
    out and its games skipped."""
    faults, out_after = POLICIES[policy]
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    ray_tmp: Path | None = None
    if backend == "ray":
        needs.module("ray", "install the 'ray' extra: pip install -e '.[ray]'")
        # Short: Ray's socket paths under it must fit in a Unix socket address.
        ray_tmp = Path(tempfile.mkdtemp(prefix="rt", dir="/tmp"))
        env["RAY_TMPDIR"] = str(ray_tmp)
    toml = _tournament(tmp_path, faults)
    results = tmp_path / "results"
    try:
        for _ in range(2):
            done = subprocess.run(
                [sys.executable, "-m", "arena.cli", "run", str(toml), "-q", "--no-report"]
                + ["--results", str(results), *BACKENDS[backend]],
                capture_output=True,
                text=True,
                timeout=300,
                env=env,
            )
            assert done.returncode == 0, done.stderr[-3000:]
            with Store.open_existing(results / "policy") as store:
                records = list(store.records())
            crashy = [r for r in records if "crashy" in r.players]
            assert sum("crashy" not in r.players for r in records) == 6
            assert out_after <= len(crashy) <= out_after + 1, [r.players for r in crashy]
            assert {r.reason for r in crashy} == {"crash"}
            if backend == "in-process":
                # The slots share one gate: every game of crashy started before the game
                # that put it out ended. Elsewhere the verdict travels from the arena to
                # the other process, and a game may start there in the milliseconds that
                # takes (seen on Ray: 3 ms after); the count above bounds it to one game.
                out = sorted(r.ended_at for r in crashy)[out_after - 1]
                assert all(r.started_at < out for r in crashy), [
                    (r.players, r.started_at - out) for r in crashy
                ]
            stored, skipped = len(records), 18 - len(records)
            line = (
                rf"^{stored} of 18 games stored in .* \({skipped} not played: disqualified bots\)$"
            )
            assert re.search(line, done.stdout, re.MULTILINE), done.stdout
    finally:
        if ray_tmp is not None:
            wait_none_with(str(ray_tmp), limit=30)
            subprocess.run(["rm", "-rf", str(ray_tmp)], check=False)
