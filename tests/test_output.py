"""The cause shown whole: what a bot wrote when it could not start or crashed, both
ends of it, stray stdout included, never a Python ``b'...'`` repr, in the engine's
fault, ``check-bot``, ``arena play``, the record, both reports and the web view."""

from __future__ import annotations

import sys
from pathlib import Path

import httpx
import needs
import pytest
import trio
from click.testing import CliRunner

from arena.cli import main
from arena.engine.bot import Engine
from arena.engine.config import EngineConfig
from arena.engine.errors import EngineError
from arena.engine.output import StderrTail, shown_line
from arena.engine.sandbox import Sandbox
from arena.match.record import START
from arena.storage.store import Store
from arena.web.app import Site, find_tournaments
from arena.web.server import parse_listen, serve

JVM_LIKE = (
    "printf 'Error occurred during initialization of VM\\n"
    "Could not reserve enough space for object heap\\n'; exit 1"
)
"""What a JVM that cannot start writes, to stdout, before it exits."""
CHATTY = 'for i in $(seq 1 100); do echo "runtime line $i" >&2; done; exit 2'
"""A start that fails after 100 lines of stderr: its cause first, its end last."""


def test_head_and_tail_known_answer() -> None:
    tail = StderrTail(max_lines=3, max_bytes=1024, head_lines=2, head_bytes=1024)
    tail.feed(b"".join(b"l%d\n" % i for i in range(1, 11)))
    assert tail.text() == "l1\nl2\n[... 5 earlier lines dropped]\nl8\nl9\nl10"
    tail.clear()  # a new game: a new head
    tail.feed(b"a\n\x1b[31mb\n")
    tail.feed_stdout(b"not json")
    assert tail.text() == "a\n\\x1b[31mb\n[stdout] not json"


def test_a_head_bounded_in_bytes_hands_the_rest_to_the_tail_in_order() -> None:
    tail = StderrTail(max_lines=2, max_bytes=1024, head_lines=10, head_bytes=8)
    tail.feed(b"abc\ndef\nghi\njkl\n")  # "abc\n" + "def\n" fill the head's 8 bytes
    assert tail.text() == "abc\ndef\nghi\njkl"


def test_a_line_is_shown_decoded_and_quoted_never_as_bytes() -> None:
    assert shown_line(b"Error occurred\xff \x1b[2J") == '"Error occurred\ufffd \\x1b[2J"'
    assert shown_line(b"x" * 300, limit=10) == '"xxxxxxxxxx" [... 290 more characters]'


def engine_config(script: str) -> EngineConfig:
    return EngineConfig(name="bot", command=["/bin/sh", "-c", script], sandbox=Sandbox(mode="none"))


async def start_fault(script: str) -> EngineError:
    async with Engine(engine_config(script)) as engine:
        with pytest.raises(EngineError) as info:
            await engine.start("kamisado", "standard")
    return info.value


async def test_a_runtime_that_writes_its_reasons_to_stdout_is_shown_whole() -> None:
    exc = await start_fault(JVM_LIKE)
    # Read as a bad line (protocol), or gone before hello was written (crash): a race.
    assert "b'" not in exc.detail
    if exc.reason == "protocol":
        assert '"Error occurred during initialization of VM"' in exc.detail
    assert exc.stderr_tail.splitlines() == [
        "[stdout] Error occurred during initialization of VM",
        "[stdout] Could not reserve enough space for object heap",
    ]


async def test_a_failed_start_keeps_the_first_and_the_last_lines() -> None:
    exc = await start_fault(CHATTY)
    lines = exc.stderr_tail.splitlines()
    assert lines[:20] == [f"runtime line {i}" for i in range(1, 21)]
    assert lines[20] == "[... 60 earlier lines dropped]"
    assert lines[21:] == [f"runtime line {i}" for i in range(81, 101)]


def test_check_bot_shows_the_whole_cause(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["check-bot", "--", "/bin/sh", "-c", JVM_LIKE])
    assert result.exit_code == 1
    lines = result.output.splitlines()
    start = lines.index(next(x for x in lines if x.startswith("FAIL start: ")))
    assert "b'" not in lines[start]
    assert lines[start + 1 : start + 3] == [
        "  | [stdout] Error occurred during initialization of VM",
        "  | [stdout] Could not reserve enough space for object heap",
    ]
    result = CliRunner().invoke(main, ["check-bot", "--", "/bin/sh", "-c", CHATTY])
    assert "  | runtime line 1\n" in result.output and "  | runtime line 100\n" in result.output


def test_check_bot_shows_a_real_jvms_start_error() -> None:
    java = needs.tool("java", what="a JDK (openjdk-17-jdk-headless)")
    result = CliRunner().invoke(main, ["check-bot", "--", java, "-Xms100000g", "-version"])
    assert result.exit_code == 1
    assert "  | [stdout] Error occurred during initialization of VM\n" in result.output
    assert "  | [stdout] Could not reserve enough space" in result.output
    assert "b'" not in result.output


def test_play_shows_both_ends(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["play", "random", f"/bin/sh -c '{CHATTY}'", "-q"])
    assert result.exit_code == 0, result.output
    assert "result 1-0 start" in result.output
    said = result.stderr.split("(first and last lines):\n", 1)[1].splitlines()
    assert said[0] == "runtime line 1" and said[-1] == "runtime line 100"
    assert "[... 60 earlier lines dropped]" in said


# Starts normally twice (the pre-flight, then its first game, where it crashes at its
# first decision); every later start fails after 100 lines of stderr.
FLAKY = """
import os, sys
from arena.sdk import run
state = sys.argv[1]
count = len(os.listdir(state))
open(os.path.join(state, f"start-{count}"), "w").close()
if count >= 2:
    for i in range(1, 101):
        print(f"runtime line {i}", file=sys.stderr)
    sys.exit(2)
run(lambda request: os._exit(1), name="flaky")
"""


def test_a_start_fault_mid_run_shows_both_ends_in_record_reports_and_web(tmp_path: Path) -> None:
    state = tmp_path / "state"
    state.mkdir()
    state.chmod(0o777)  # the bot runs as nobody under a root arena
    (tmp_path / "flaky.py").write_text(FLAKY)
    toml = tmp_path / "t.toml"
    toml.write_text(
        'name = "mid"\nvariant = "single"\ntc = "5+0.1"\ngames_per_pairing = 2\n'
        "concurrency = 1\nseed = 1\n"
        '[[bots]]\nname = "a"\ncommand = "builtin:random"\n'
        f'[[bots]]\nname = "flaky"\ncommand = ["{sys.executable}", "flaky.py", "{state}"]\n'
        f'sandbox_rw = ["{state}"]\n'
    )
    results = tmp_path / "results"
    run = CliRunner().invoke(main, ["run", str(toml), "--results", str(results), "-q"])
    assert run.exit_code == 0, run.output
    directory = results / "mid"
    with Store.open_existing(directory) as store:
        records = dict(store.items())
    reasons = sorted(r.reason for r in records.values())
    assert reasons == ["crash", START], reasons
    key, record = next((k, r) for k, r in records.items() if r.reason == START)
    said = record.stderr_tails[record.players.index("flaky")]
    assert said.startswith("runtime line 1\n") and said.endswith("runtime line 100")
    for report in ("report.md", "report.html"):
        text = (directory / report).read_text(encoding="utf-8")
        assert "runtime line 1\n" in text and "runtime line 100" in text, report

    async def replay() -> dict:
        site = Site(find_tournaments([results]))
        with trio.fail_after(30):
            async with trio.open_nursery() as nursery:
                url = await nursery.start(serve, site, parse_listen("127.0.0.1:0"))
                async with httpx.AsyncClient(base_url=url, timeout=20) as client:
                    answer = await client.get("/t/mid/replay", params={"key": key})
                nursery.cancel_scope.cancel()
        return answer.json()

    shown = trio.run(replay)["output"]
    assert shown[record.players.index("flaky")] == said
