"""A whole tournament mixing local and remote entrants: ``arena run --web`` and a
real ``arena connect`` for the remote one, over loopback; every game stored."""

from __future__ import annotations

import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import trio

ARENA = [sys.executable, "-m", "arena.cli"]
TOKEN = "far-token-0123456789"
WAIT = 180.0

TOURNAMENT = """
name = "mixed"
game = "kamisado"
variant = "single"
tc = "5+0.1"
games_per_pairing = 2
concurrency = 2

[remote]
connect_timeout = 60

[[bots]]
name = "near"
command = "builtin:random"
args = ["--seed", "1"]

[[bots]]
name = "other"
command = "builtin:random"
args = ["--seed", "2"]

[[bots]]
name = "third"
command = "builtin:random"
args = ["--seed", "4"]

[[bots]]
name = "far"
remote = true
token_env = "FAR_TOKEN"
"""


async def read_until(stream: trio.abc.ReceiveStream, pattern: str, seen: bytearray) -> re.Match:
    while (match := re.search(pattern, seen.decode(errors="replace"))) is None:
        chunk = await stream.receive_some(1 << 16)
        assert chunk, f"ended before {pattern!r}: {seen.decode(errors='replace')}"
        seen += chunk
    return match


async def connect_until_the_end(
    run: trio.Process, url: str, env: dict[str, str], seen: bytearray, *options: str
) -> str:
    """A real ``arena connect URL --name far [options] -- random`` playing until
    ``run`` ends: both must exit 0; what it said."""
    connect = await trio.lowlevel.open_process(
        [*ARENA, "connect", url, "--name", "far", *options, "--", "random", "--seed", "3"],
        env=env | {"ARENA_TOKEN": TOKEN},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        with trio.fail_after(WAIT):
            assert await run.wait() == 0, seen.decode()
            assert await connect.wait() == 0
            said = bytearray()
            await read_until(connect.stdout, r"the arena ended the run", said)
    finally:
        if connect.returncode is None:
            connect.kill()
    return said.decode()


@pytest.mark.parametrize("workers", ["1", "2"])
async def test_a_tournament_with_a_remote_entrant_stores_every_game(
    tmp_path: Path, workers: str
) -> None:
    """With ``--workers 2`` the local pair's games go to the worker processes as ever,
    the remote entrant's are played in the arena's process, at the same time."""
    (tmp_path / "t.toml").write_text(TOURNAMENT)
    env = {**os.environ, "FAR_TOKEN": TOKEN}
    run = await trio.lowlevel.open_process(
        [*ARENA, "run", "t.toml", "--web", "127.0.0.1:0", "--quiet", "--workers", workers],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        seen = bytearray()
        with trio.fail_after(WAIT):
            match = await read_until(run.stderr, r"arena connect (http://127\.0\.0\.1:\d+)", seen)
        assert "--token" not in seen.decode() and TOKEN not in seen.decode()
        note = "note: the remote entrants' games are played in this process"
        assert (note in seen.decode()) == (workers == "2")
        told = await connect_until_the_end(run, match[1], env, seen)
    finally:
        if run.returncode is None:
            run.kill()
    assert "as far" in told and "game 1: against" in told and "game 6 over" in told
    tally = re.search(r"this bot played 6 games: (\d) won, (\d) lost, (\d) drawn\n", told)
    assert tally is not None and sum(map(int, tally.groups())) == 6, told
    with sqlite3.connect(tmp_path / "results" / "mixed" / "games.sqlite") as db:
        rows = db.execute("SELECT key, reason FROM games").fetchall()
        (stored,) = db.execute("SELECT config_toml FROM tournament").fetchone()
    report = (tmp_path / "results" / "mixed" / "report.md").read_text(encoding="utf-8")
    assert "Latency of the remote entrants (round trip, median over their moves): far " in report
    out = bytearray()
    while chunk := await run.stdout.receive_some(1 << 20):
        out += chunk
    assert "Latency of the remote entrants" in out.decode()
    assert "waiting up to 60 s for 1 remote entrant to connect: far\n" in out.decode()
    assert "remote entrant far is here: 'random'" in out.decode()
    assert len(rows) == 12
    assert all(
        reason not in ("crash", "time", "protocol", "disconnect", "start") for _, reason in rows
    )
    assert sum("far" in key for key, _ in rows) == 6
    assert TOKEN not in stored
    from arena.storage.store import Store

    with Store.open_existing(tmp_path / "results" / "mixed") as store:
        records = list(store.records())
    for record in records:  # each remote move keeps its connection's round trip
        for action in record.actions:
            remote = record.players[action.player] == "far" and not action.forced
            assert (action.rtt_ms is not None) == remote
            if action.rtt_ms is not None:
                assert 0 < action.rtt_ms < 1000
        if "far" in record.players:
            assert record.sandbox[record.players.index("far")].mode == "remote"


def test_a_remote_entrant_that_never_connects_cannot_start(tmp_path: Path) -> None:
    """The pre-flight waits ``connect_timeout`` for it, then it is an entrant that
    cannot start: the run stops in one line, or ``--skip-broken`` plays the others."""
    text = TOURNAMENT.replace("connect_timeout = 60", "connect_timeout = 1")
    (tmp_path / "t.toml").write_text(text)
    env = {**os.environ, "FAR_TOKEN": TOKEN}
    command = [*ARENA, "run", "t.toml", "--web", "127.0.0.1:0", "--quiet", "--no-report"]
    done = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=WAIT
    )
    assert done.returncode != 0
    lines = done.stderr.splitlines()
    assert lines[1].startswith(
        "arena: far: did not start: not connected within 1 s (its author runs arena connect)"
    ), lines
    done = subprocess.run(
        [*command, "--skip-broken"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=WAIT,
    )
    assert done.returncode == 0, done.stderr
    assert "6 of 12 games stored" in done.stdout and "did not start: far" in done.stdout


SLOW_BOT = """\
import json, sys, time
for line in sys.stdin:
    m = json.loads(line)
    if m["type"] == "hello":
        print(json.dumps({"type": "identity", "id": m["id"], "protocol": 1,
                          "name": "slow", "games": ["kamisado"]}), flush=True)
    elif m["type"] == "newgame":
        print(json.dumps({"type": "ready", "id": m["id"]}), flush=True)
    elif m["type"] == "go":
        time.sleep(0.3)
        print(json.dumps({"type": "action", "id": m["id"], "action": m["legal"][0]}), flush=True)
"""


async def start_connect(url: str, script: Path) -> trio.Process:
    return await trio.lowlevel.open_process(
        [
            *ARENA,
            "connect",
            url,
            "--name",
            "far",
            "--sandbox",
            "none",
            "--",
            sys.executable,
            str(script),
        ],
        env={**os.environ, "ARENA_TOKEN": TOKEN},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )


PAIR = """
name = "mixed"
game = "kamisado"
variant = "single"
tc = "60+0.1"
games_per_pairing = 2

[remote]
connect_timeout = 60
reconnect_s = 30

[[bots]]
name = "near"
command = "builtin:random"
args = ["--seed", "1"]

[[bots]]
name = "far"
remote = true
token_env = "FAR_TOKEN"
"""
"""The remote entrant's two games against one local bot."""


async def killed_mid_game(
    tmp_path: Path, reconnect: float, back: str
) -> tuple[list[tuple[str, str]], str]:
    """A run whose remote entrant's ``arena connect`` is killed in its first game and
    started again once the run's output shows ``back``; the stored games, and what
    the run said."""
    text = PAIR.replace("reconnect_s = 30", f"reconnect_s = {reconnect}")
    (tmp_path / "t.toml").write_text(text)
    script = tmp_path / "slow.py"
    script.write_text(SLOW_BOT)
    run = await trio.lowlevel.open_process(
        [*ARENA, "run", "t.toml", "--web", "127.0.0.1:0", "--quiet", "--no-report", "-j", "1"],
        cwd=tmp_path,
        env={**os.environ, "FAR_TOKEN": TOKEN},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    processes = [run]
    try:
        with trio.fail_after(WAIT):
            url = (await read_until(run.stderr, r"arena connect (http://\S+)", bytearray()))[1]
            first = await start_connect(url, script)
            processes.append(first)
            await read_until(first.stdout, r"game 1: against", bytearray())
            first.kill()
            said = bytearray()
            await read_until(run.stdout, back, said)
            processes.append(await start_connect(url, script))
            while chunk := await run.stdout.receive_some(1 << 16):
                said += chunk
            assert await run.wait() == 0
    finally:
        for process in processes:
            if process.returncode is None:
                process.kill()
    with sqlite3.connect(tmp_path / "results" / "mixed" / "games.sqlite") as db:
        return db.execute("SELECT key, reason FROM games ORDER BY key").fetchall(), said.decode()


async def test_connect_killed_mid_game_and_back_within_the_window_completes_the_game(
    tmp_path: Path,
) -> None:
    rows, said = await killed_mid_game(tmp_path, 30, r"remote entrant far lost its connection")
    assert len(rows) == 2
    assert "remote entrant far lost its connection; its clock runs while it may come back " in said
    assert "remote entrant far is back\n" in said and "did not come back" not in said
    assert not [r for r in rows if r[1] in ("disconnect", "crash", "time", "start", "protocol")]


async def test_connect_gone_past_the_window_is_a_disconnect(tmp_path: Path) -> None:
    rows, said = await killed_mid_game(tmp_path, 1, r"disconnect")
    assert len(rows) == 2
    assert "remote entrant far did not come back within 1 s\n" in said
    assert "remote entrant far connected again\n" in said  # for its second game
    assert [r[1] for r in rows].count("disconnect") == 1, rows
