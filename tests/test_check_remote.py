"""``arena check-bot --listen``: a real checker process opens a gateway on loopback,
a real ``arena connect`` brings the bot, and the checks run over the link."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import trio

TOKEN = "check-token-0123456789"
WAIT = 120.0
ENV = {**os.environ, "ARENA_TOKEN": TOKEN}

GARBAGE = r"""
import json, sys

def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()

for line in sys.stdin:
    msg = json.loads(line)
    t = msg["type"]
    if t == "hello":
        send({"type": "identity", "id": msg["id"], "protocol": 1, "name": "garbage",
              "author": "tests", "version": "0", "games": ["kamisado"]})
    elif t == "newgame":
        send({"type": "ready", "id": msg["id"]})
    elif t == "ping":
        send({"type": "pong", "id": msg["id"]})
    elif t == "go":
        sys.stdout.write("garbage\n")
        sys.stdout.flush()
    elif t == "quit":
        sys.exit(0)
"""


def arena(*args: str) -> list[str]:
    return [sys.executable, "-m", "arena.cli", *args]


async def lines(process: trio.Process, out: list[str], first: trio.Event) -> None:
    """Everything the process writes, line by line, into ``out``."""
    assert process.stdout is not None
    buffer = b""
    while chunk := await process.stdout.receive_some(1 << 16):
        buffer += chunk
        *done, buffer = buffer.split(b"\n")
        out += [x.decode() for x in done]
        if out:
            first.set()
    if buffer:
        out.append(buffer.decode())
    first.set()


async def check_over_gateway(bot: list[str], *options: str) -> tuple[int, list[str], int]:
    """The checker's exit status and lines, and the client's exit status."""
    out: list[str] = []
    with trio.fail_after(WAIT):
        async with trio.open_nursery() as nursery:
            checker = await trio.lowlevel.open_process(
                arena("check-bot", "--listen", "127.0.0.1:0", "--name", "far", *options),
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                env=ENV,
            )
            first = trio.Event()
            nursery.start_soon(lines, checker, out, first)
            await first.wait()
            found = re.search(r"arena connect (\S+) --name far -- COMMAND", out[0])
            assert found, out
            connect = await trio.lowlevel.open_process(
                [
                    *arena("connect", found[1], "--name", "far", "--sandbox", "none"),
                    "--max-backoff",
                    "1",
                    "--",
                    *bot,
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=ENV,
            )
            code = await checker.wait()
            connected = await connect.wait()  # it ends when the checker closes the gateway
    return code, out, connected


CHECKS = ["start", "identity", "ping", "newgame", "go: start position", "gameover", "quit"]


def verdicts(out: list[str]) -> dict[str, str]:
    """Each check's verdict by name (``games: ...`` checks under their own names)."""
    seen = {}
    for x in out:
        for name in [*CHECKS, *re.findall(r"^\w+ (games: [^:]+):", x)]:
            for verdict in ("PASS", "FAIL", "SKIP"):
                if x.startswith(f"{verdict} {name}: "):
                    seen[name] = verdict
    return seen


async def test_a_good_bot_passes_over_the_gateway_with_quit_skipped() -> None:
    code, out, connected = await check_over_gateway(
        ["random"], "--game", "kamisado", "--games", "1", "--sandbox", "none"
    )
    assert code == 0, out
    seen = verdicts(out)
    assert seen["quit"] == "SKIP", out
    assert "arena connect" in next(x for x in out if x.startswith("SKIP quit"))
    passed = {k for k, v in seen.items() if v == "PASS"}
    assert {"start", "identity", "ping", "newgame", "go: start position", "gameover"} <= passed
    assert any(k.startswith("games: ") for k in passed), out
    assert "FAIL" not in seen.values()
    assert re.match(r"all \d+ checks run passed, 1 skipped", out[-1]), out
    assert connected == 0


async def test_a_bot_answering_garbage_fails_its_go_checks_over_the_gateway(
    tmp_path: Path,
) -> None:
    script = tmp_path / "garbage.py"
    script.write_text(textwrap.dedent(GARBAGE))
    code, out, _ = await check_over_gateway(
        [sys.executable, str(script)], "--game", "kamisado", "--games", "0", "--timeout", "3"
    )
    assert code == 1, out
    seen = verdicts(out)
    assert seen["start"] == seen["ping"] == seen["newgame"] == "PASS", out
    assert seen["go: start position"] == "FAIL", out
    go_line = next(x for x in out if x.startswith("FAIL go: start position"))
    assert "protocol" in go_line and "garbage" in go_line, go_line
    assert seen["quit"] == "SKIP"
    assert "remote entry far, connected through http://127.0.0.1:" in out[-1], out


async def test_nobody_connecting_is_one_line_within_the_wait() -> None:
    with trio.fail_after(WAIT):
        done = await trio.run_process(
            arena("check-bot", "--listen", "127.0.0.1:0", "--name", "far", "--wait", "0.5"),
            capture_stdout=True,
            capture_stderr=True,
            check=False,
            env=ENV,
        )
    out = done.stdout.decode().splitlines()
    assert done.returncode == 1
    assert done.stderr == b""
    assert out[1:] == ["nobody connected as far within 0.5 s; nothing was checked"], out
    assert "(its token in ARENA_TOKEN)" in out[0] and TOKEN not in out[0]


def test_listen_wants_a_name_and_no_command() -> None:
    from click.testing import CliRunner

    from arena.cli import main

    runner = CliRunner()
    alone = runner.invoke(main, ["check-bot", "--name", "far"])
    assert alone.exit_code == 2 and "--listen and --name go together" in alone.output
    both = runner.invoke(main, ["check-bot", "--listen", "0", "--name", "far", "--", "./bot"])
    assert both.exit_code == 2 and "no COMMAND" in both.output
    nothing = runner.invoke(main, ["check-bot"])
    assert nothing.exit_code == 2 and "give the bot's COMMAND" in nothing.output
