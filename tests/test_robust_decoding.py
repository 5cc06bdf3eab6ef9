"""Bytes from a bot cannot crash the arena: deep nesting and fuzzed lines.

A line nested 1,000 levels deep once raised ``RecursionError`` inside msgspec,
killing ``arena play``, ``arena check-bot`` and every tournament worker. Here it
goes through the real commands, as real processes.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import msgspec
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.protocol.messages import (
    MAX_DEPTH,
    Action,
    Identity,
    Info,
    Pong,
    ProtocolError,
    Ready,
    decode_bot_message,
    nesting_depth,
)
from arena.storage.store import Store

HERE = Path(__file__).resolve().parent
BAD_BOT = f"{sys.executable} {HERE / 'bad_bot.py'}"
ARENA = [sys.executable, "-m", "arena.cli"]


def arena(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*ARENA, *args], capture_output=True, text=True, timeout=timeout)


def test_deep_nesting_is_a_protocol_error_not_a_crash() -> None:
    for n in (MAX_DEPTH + 1, 1000, 100_000):
        line = b'{"type":"action","id":1,"action":"x","x":' + b"[" * n + b"]" * n + b"}"
        try:
            decode_bot_message(line)
        except ProtocolError as exc:
            assert f"nested deeper than {MAX_DEPTH} levels" in str(exc)
        else:
            raise AssertionError("accepted")
    fine = b'{"type":"action","id":1,"action":"x","x":' + b"[" * 31 + b"]" * 31 + b"}"
    assert decode_bot_message(fine).action == "x"


def test_brackets_inside_strings_do_not_count() -> None:
    text = "[{" * 5000
    line = msgspec.json.encode({"type": "info", "id": 1, "text": text, "pv": ['a\\"[']})
    assert nesting_depth(line) == 2
    assert decode_bot_message(line).text == text


def test_play_faults_the_deeply_nesting_bot() -> None:
    result = arena("play", "random", f"{BAD_BOT} deep_nesting", "--seed", "1", "-q")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert "result 1-0 protocol" in result.stdout
    assert "nested deeper than" in result.stdout


def test_check_bot_reports_the_deeply_nesting_bot() -> None:
    result = arena("check-bot", "--", *BAD_BOT.split(), "deep_nesting")
    assert "Traceback" not in result.stderr + result.stdout
    assert result.returncode == 1, result.stdout + result.stderr
    assert "nested deeper than" in result.stdout


def test_tournament_with_a_deeply_nesting_bot_completes(tmp_path: Path) -> None:
    toml = tmp_path / "t.toml"
    toml.write_text(
        f"""
name = "deep"
variant = "single"
tc = "5+0.1"
games_per_pairing = 4
concurrency = 2
[[bots]]
name = "deep"
command = "{BAD_BOT} deep_nesting"
[[bots]]
name = "random"
command = "builtin:random"
"""
    )
    result = arena(
        "run", str(toml), "--results", str(tmp_path), "-q", "--no-report", "--workers", "2"
    )
    assert result.returncode == 0, result.stderr
    with Store.open_existing(tmp_path / "deep") as store:
        records = list(store.records())
    assert len(records) == 4
    for record in records:
        assert record.reason == "protocol"
        assert record.players[record.faulty] == "deep"
        assert "nested deeper than" in record.detail


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
    lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
    max_leaves=30,
)


@settings(max_examples=200, deadline=None)
@given(
    st.one_of(
        st.binary(max_size=300),
        st.text(max_size=300).map(lambda t: t.encode("utf-8", "surrogatepass")),
        st.dictionaries(
            st.sampled_from(["type", "id", "action", "pv", "depth", "score", "text", "x"]),
            json_values,
        ).map(lambda d: msgspec.json.encode(d)),
        st.tuples(st.integers(0, 3000), st.sampled_from("[{")).map(
            lambda t: b'{"type":"pong","id":1,"x":' + t[1].encode() * t[0]
        ),
    )
)
def test_fuzzed_lines_raise_nothing_but_protocol_errors(line: bytes) -> None:
    """The documented contract: a message of the union, or ProtocolError (and no
    other exception, which would reach the referee as an arena error)."""
    try:
        message = decode_bot_message(line)
    except ProtocolError as exc:
        assert str(exc).startswith("invalid bot message: ")
    else:
        assert isinstance(message, Identity | Ready | Action | Info | Pong)


def test_a_fuzzed_tournament_has_no_arena_error() -> None:
    """A small run of ``bench/fuzz.py`` (the bench pushes >= 100,000 lines): real
    ``arena run`` with worker processes, fuzzing bots with hostile lines often."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("fuzz", HERE.parent / "bench" / "fuzz.py")
    assert spec is not None and spec.loader is not None
    fuzz = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fuzz)
    counts = fuzz.fuzz(target=2000, games=2, seed=5, rate=0.15, quiet=True)
    assert counts["fuzzed lines"] >= 2000
    assert counts["hostile lines"] >= 1
    assert counts.get("arena errors", 0) == 0
    assert counts.get("unexplained faults", 0) == 0
    assert counts.get("games without a reason", 0) == 0
    assert counts["games"] >= 6


NAMED_BOT = r"""
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    reply = {"id": msg.get("id")}
    if msg["type"] == "hello":
        reply.update(type="identity", protocol=1, games=["kamisado"],
                     name="\x1b[2J\x1b]0;owned\x07" + "n" * 10000)
    elif msg["type"] == "newgame":
        reply["type"] = "ready"
    elif msg["type"] == "go":
        reply.update(type="action", action=msg["legal"][0])
    else:
        continue
    print(json.dumps(reply), flush=True)
"""


def test_a_bot_cannot_write_escape_sequences_to_the_terminal_through_its_name(
    tmp_path: Path,
) -> None:
    bot = tmp_path / "named.py"
    bot.write_text(NAMED_BOT)
    result = arena(
        "play", f"{sys.executable} {bot}", "random", "--seed", "1", "--variant", "single"
    )
    assert result.returncode == 0, result.stderr
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    first = result.stdout.splitlines()[0]
    assert "\\x1b[2J\\x1b]0;owned\\x07" in first and "n" * 40 in first and "n" * 100 not in first
