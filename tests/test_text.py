"""Bot-controlled text never carries a raw control or bidi character to a terminal
or ``report.md`` (issue 22).

The end-to-end tests run a real hostile bot (``tests/hostile_text_bot.py``: its
identity, option names, ``info`` lines, stderr and a bad message all carry an
OSC 0 title, a screen clear, an OSC 52 clipboard write, a C1 CSI and a bidi
override) through ``arena play``, ``check-bot``, ``run`` and ``report`` on a real
pseudo-terminal, and read every byte that reached it.
"""

from __future__ import annotations

import fcntl
import os
import re
import select
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Iterator
from pathlib import Path

import msgspec
import pytest

from arena.match.record import ActionRecord, GameRecord
from arena.protocol.messages import (
    Action,
    Identity,
    Info,
    ProtocolError,
    decode_bot_message,
)
from arena.protocol.text import visible
from arena.report.fmt import md_text
from arena.storage.store import Store

HERE = Path(__file__).parent
HOSTILE = HERE / "hostile_text_bot.py"
ARENA = [sys.executable, "-m", "arena.cli"]
PAYLOAD = "\x1b]0;owned\x07\x1b[2J\x1b]52;c;b3duZWQ=\x07\x9b31m\u202eevil"
SHOWN = visible(PAYLOAD)
"""What the operator sees instead: ``\\x1b]0;owned\\x07...``."""
RICH = re.compile(r"\x1b\[\??[0-9;]*[mAKhl]")
"""What rich itself writes on a terminal: colours, cursor up, erase line, cursor shown."""


def attacks(output: str) -> list[str]:
    """Every control, C1 or bidi character in ``output`` that rich did not write
    itself (a pty turns ``\\n`` into ``\\r\\n``: both are fine)."""
    rest = RICH.sub("", output)
    return sorted({c for c in rest if c not in "\r\n" and visible(c) != c})


def on_pty(*args: str, cwd: Path | None = None, timeout: float = 120) -> tuple[int, str]:
    """Run ``arena ARGS`` with a pseudo-terminal as stdin, stdout and stderr; all it wrote."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 200, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "COLUMNS", "LINES")}
    env["TERM"] = "xterm-256color"
    proc = subprocess.Popen(
        [*ARENA, *args], stdin=slave, stdout=slave, stderr=slave, cwd=cwd, env=env
    )
    os.close(slave)
    out = bytearray()
    deadline = time.monotonic() + timeout
    try:
        while True:
            ready, _, _ = select.select([master], [], [], max(0.0, deadline - time.monotonic()))
            assert ready, f"arena {args[0]} still running after {timeout} s: {bytes(out)!r}"
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every writer closed the terminal
                break
            if not chunk:
                break
            out += chunk
        return proc.wait(timeout=10), out.decode("utf-8", errors="replace")
    finally:
        proc.kill()
        proc.wait()
        os.close(master)


def strings(value: object) -> Iterator[str]:
    """Every string inside a JSON-like value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


def bot(mode: str) -> str:
    return f"{sys.executable} {HOSTILE} {mode}"


# --------------------------------------------------------------------------- the function


def test_escape_sequences_made_visible() -> None:
    shown = visible(PAYLOAD)
    assert all(ord(c) >= 0x20 and not 0x7F <= ord(c) <= 0x9F for c in shown)
    assert "\u202e" not in shown
    assert shown.startswith("\\x1b]0;owned\\x07\\x1b[2J")
    assert visible(shown) == shown  # idempotent: a store read twice shows the same


def test_newline_kept_only_when_multiline() -> None:
    assert visible("a\nb") == "a\\x0ab"
    assert visible("a\nb\x1b", multiline=True) == "a\nb\\x1b"
    assert visible("a\r\nb\rc", multiline=True) == "a\nb\\x0dc"  # a line end, an overwrite


def test_plain_text_unchanged() -> None:
    assert visible("alphabeta 1.2 — ünïcode") == "alphabeta 1.2 — ünïcode"


# --------------------------------------------------------------------------- the decoder


def test_identity_and_info_text_is_made_visible_where_it_is_decoded() -> None:
    ident = decode_bot_message(
        msgspec.json.encode(
            {
                "type": "identity",
                "id": 1,
                "protocol": 1,
                "name": "n" + PAYLOAD,
                "author": PAYLOAD,
                "version": PAYLOAD,
                "games": ["kamisado" + PAYLOAD],
                "options": [
                    {"name": PAYLOAD, "type": "string", "default": PAYLOAD},
                    {"name": "c", "type": "choice", "choices": [PAYLOAD]},
                ],
            }
        )
    )
    assert isinstance(ident, Identity) and ident.name == "n" + SHOWN
    assert ident.author == ident.version == SHOWN and ident.games == ["kamisado" + SHOWN]
    assert ident.options is not None
    assert (ident.options[0].name, ident.options[0].default) == (SHOWN, SHOWN)
    assert ident.options[1].choices == [SHOWN]
    info = decode_bot_message(
        msgspec.json.encode({"type": "info", "id": 1, "pv": ["a", PAYLOAD], "text": PAYLOAD})
    )
    assert isinstance(info, Info) and info.pv == ["a", SHOWN] and info.text == SHOWN


def test_an_action_is_decoded_as_sent() -> None:
    """Legality compares the action itself; an illegal one is only ever quoted by repr."""
    line = msgspec.json.encode({"type": "action", "id": 1, "action": PAYLOAD})
    assert decode_bot_message(line) == Action(id=1, action=PAYLOAD)


def test_a_decoding_error_quotes_a_bad_value_visibly() -> None:
    with pytest.raises(ProtocolError) as info:
        decode_bot_message(msgspec.json.encode({"type": PAYLOAD, "id": 1}))
    assert SHOWN in str(info.value) and "\x1b" not in str(info.value)


# --------------------------------------------------------------------------- on a terminal


def test_arena_play_shows_a_hostile_bots_name_detail_and_stderr_visibly() -> None:
    code, out = on_pty("play", bot("crash"), "random", "--variant", "single", "--seed", "1")
    assert code == 0, out
    assert not attacks(out), (attacks(out), out)
    assert f"hostile{SHOWN[:40]}" in out  # the name (cut at 64 characters)
    assert f"thinking{SHOWN}" in out  # the stderr tail of a faulted bot
    assert "\x1b" not in out  # arena play writes no escape sequence of its own


def test_check_bot_shows_a_hostile_bots_identity_and_options_visibly() -> None:
    code, out = on_pty("check-bot", "--games", "0", "--", *bot("play").split())
    assert code == 0, out
    assert not attacks(out) and "\x1b" not in out, (attacks(out), out)
    assert f"name 'hostile{SHOWN}', author 'author{SHOWN}', version '1{SHOWN}'" in out
    assert f"options: Hash{SHOWN} (int 0..2, default 1), Style (choice of a{SHOWN}|b)" in out


def test_check_bot_quotes_a_bad_message_and_stderr_visibly() -> None:
    code, out = on_pty("check-bot", "--games", "0", "--", *bot("badtag").split())
    assert code == 1, out
    assert not attacks(out) and "\x1b" not in out, (attacks(out), out)
    assert f"Invalid value '{SHOWN}'" in out and f"\n  | thinking{SHOWN}" in out


BOTS = {
    "hplay": [sys.executable, str(HOSTILE), "play"],
    "hbad": [sys.executable, str(HOSTILE), "badtag"],
    "random": ["builtin:random"],
}


def write_tournament(base: Path, extra: str = "", bots: tuple[str, ...] = tuple(BOTS)) -> Path:
    lines = ['name = "hostile"', 'variant = "single"', 'tc = "5+0.1"', "concurrency = 1"]
    for name, command in ((b, BOTS[b]) for b in bots):
        lines += [
            "[[bots]]",
            f'name = "{name}"',
            f"command = {msgspec.json.encode(command).decode()}",
        ]
        if name == "hplay":
            lines.append(extra)
    path = base / "hostile.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.fixture(scope="module")
def hostile_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """``arena run`` with its live view on a terminal (and its report written)."""
    base = tmp_path_factory.mktemp("hostile-text")
    path = write_tournament(base)
    code, out = on_pty("run", str(path), "--results", str(base / "results"), "--workers", "1")
    assert code == 0, out
    return base / "results" / "hostile", out


def test_arena_runs_live_view_shows_fault_details_visibly(hostile_run) -> None:
    _, out = hostile_run
    assert not attacks(out), (attacks(out), out[-3000:])
    assert f"Invalid value '{SHOWN}'" in out  # the bad message's detail, in the last results


def test_the_records_keep_a_bots_words_visible(hostile_run) -> None:
    directory, _ = hostile_run
    with Store.open_existing(directory) as store:
        records = list(store.records())
    assert len(records) == 6
    texts = list(strings(msgspec.to_builtins(records)))
    assert not attacks("".join(texts)), attacks("".join(texts))
    assert f"thinking{SHOWN}" in texts and SHOWN in texts  # a stderr tail, an info's PV


def test_report_md_and_html_hold_no_raw_control_character(hostile_run) -> None:
    directory, _ = hostile_run
    code, out = on_pty("report", str(directory))
    assert code == 0 and not attacks(out), (attacks(out), out)
    md = (directory / "report.md").read_text(encoding="utf-8")
    html = (directory / "report.html").read_text(encoding="utf-8")
    assert not attacks(md) and not attacks(html.replace("\t", ""))
    # the last info, in a table cell: shown literally in Markdown too (issue 33)
    assert md_text(f"pv h1-g2 {SHOWN}") in md or md_text(f"{SHOWN}, text{SHOWN}") in md
    assert f"thinking{SHOWN}" in md  # a faulted game's stderr tail
    assert f"thinking{SHOWN}" in html


def test_an_unknown_option_error_lists_the_declared_names_visibly(tmp_path: Path) -> None:
    path = write_tournament(tmp_path, extra="options = { Nope = 1 }")
    code, out = on_pty("run", str(path), "--results", str(tmp_path / "results"))
    assert code != 0 and out.count("\n") == 1, out
    assert not attacks(out) and "\x1b" not in out, (attacks(out), out)
    assert f"declares no such option (it has: Hash{SHOWN}, Style)" in out


def test_arena_run_through_a_pipe_shows_details_visibly(tmp_path: Path) -> None:
    path = write_tournament(tmp_path, bots=("hbad", "random"))
    done = subprocess.run(
        [*ARENA, "run", str(path), "--results", str(tmp_path / "results"), "--no-report"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert not attacks(done.stdout + done.stderr) and "\x1b" not in done.stdout
    assert f"Invalid value '{SHOWN}'" in done.stdout


# --------------------------------------------------------------------------- older stores


def test_a_store_an_older_arena_wrote_raw_is_shown_visibly(tmp_path: Path) -> None:
    """Records as an arena before issue 22 stored them: the bot's words as it wrote them."""
    directory = tmp_path / "old"
    ident = {"name": "evil" + PAYLOAD, "author": PAYLOAD, "version": "1" + PAYLOAD}
    with Store.open(directory, name="old", config_text="", fingerprint="f") as store:
        for n, players in enumerate((("a", "b"), ("b", "a"))):
            record = GameRecord(
                game="kamisado",
                variant="single",
                players=list(players),
                opening="obvpyrgn/8/8/8/8/8/8/NGRYPVBO b - single 0-0 1 -",
                actions=[ActionRecord(0, "h1-g2", 5, info={"pv": [PAYLOAD], "text": PAYLOAD})],
                score=0.0,
                reason="crash",
                detail=f"{players[0]}: exited with code 3 {PAYLOAD}",
                faulty=0,
                stderr_tails=[f"line\n{PAYLOAD}", ""],
                identities=[ident, {"name": "plain"}],
                time_control="5+0.1",
            )
            assert store.add_game(f"r1:a:b/{n + 1}", "r1:a:b", record)
    code, out = on_pty("report", str(directory))
    assert code == 0 and not attacks(out), (attacks(out), out)
    md = (directory / "report.md").read_text(encoding="utf-8")
    assert not attacks(md), attacks(md)
    assert md_text(f"exited with code 3 {SHOWN}") in md and f"  {SHOWN}" in md
    assert md_text(f"pv {SHOWN}") in md
    code, out = on_pty("ratings", str(tmp_path), cwd=tmp_path)
    assert code == 0 and not attacks(out), (attacks(out), out)
    ratings = (tmp_path / "ratings.md").read_text(encoding="utf-8")
    assert not attacks(ratings) and md_text(f"evil{SHOWN[:30]}") in ratings, ratings
