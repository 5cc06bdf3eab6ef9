"""Wire messages, codecs and line framing (no subprocesses: in-memory streams)."""

from __future__ import annotations

import json

import msgspec
import pytest
import trio
import trio.testing
from hypothesis import given
from hypothesis import strategies as st

from arena.match.clock import Clock, TimeControl
from arena.match.wire import clock_info
from arena.protocol.messages import (
    EXPECTED_ANSWER,
    MAX_LINE,
    PROTOCOL_VERSION,
    Action,
    EndOfStream,
    GameOver,
    Go,
    Hello,
    Identity,
    Info,
    LineReader,
    LineTooLong,
    NewGame,
    Ping,
    Pong,
    ProtocolError,
    Quit,
    Ready,
    decode_arena_message,
    decode_bot_message,
    encode_line,
    send_message,
)

START = "obvpyrgn/8/8/8/8/8/8/NGRYPVBO b - standard 0-0 1 -"


def _go() -> Go:
    clock = Clock(TimeControl.parse("10+0.1"))
    return Go(
        id=7,
        player=0,
        position=START,
        observation={"board": ["onvpyrgn"], "to_move": 0},
        history=[],
        legal=["c1-c5", "c1-c2"],
        clock=clock_info((clock, clock), 0),
    )


ARENA_MESSAGES = [
    Hello(id=1, game="kamisado", variant="standard"),
    NewGame(
        id=2,
        game="kamisado",
        variant="standard",
        player=1,
        players=["a", "b"],
        position=START,
        time_control="10+0.1",
    ),
    _go(),
    Ping(id=9),
    GameOver(result="1-0", reason="home-row", winner=0),
    Quit(),
]

BOT_MESSAGES = [
    Identity(id=1, protocol=1, name="rnd", author="me", version="1.0", games=["kamisado"]),
    Ready(id=2),
    Info(id=7, depth=3, score=-0.5, pv=["c1-c5"], nodes=1234),
    Action(id=7, action="c1-c5"),
    Pong(id=9),
]


@pytest.mark.parametrize("msg", ARENA_MESSAGES, ids=lambda m: type(m).__name__)
def test_arena_messages_round_trip(msg):
    line = encode_line(msg)
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    assert json.loads(line)["type"] == type(msg).__struct_config__.tag
    assert decode_arena_message(line) == msg


@pytest.mark.parametrize("msg", BOT_MESSAGES, ids=lambda m: type(m).__name__)
def test_bot_messages_round_trip(msg):
    assert decode_bot_message(encode_line(msg)) == msg


def test_go_carries_everything_a_bot_needs():
    data = json.loads(encode_line(_go()))
    assert data["type"] == "go" and data["id"] == 7
    assert data["position"] == START
    assert data["legal"] == ["c1-c5", "c1-c2"]
    assert data["clock"] == {
        "control": "10+0.1",
        "remaining_ms": [10000, 10000],
        "increment_ms": 100,
        "movetime_ms": None,
        "moves_to_go": None,
        "margin_ms": 50,
        "budget_ms": 10000,
    }


def test_hello_defaults_to_this_protocol_version():
    data = json.loads(encode_line(Hello(id=1, game="kamisado", variant="standard")))
    assert data == {
        "type": "hello",
        "id": 1,
        "protocol": PROTOCOL_VERSION,
        "game": "kamisado",
        "variant": "standard",
        "max_line": MAX_LINE,
        "cores": 1,
    }


def test_bot_optional_fields_may_be_missing_or_null_and_unknown_fields_are_ignored():
    msg = decode_bot_message(
        b'{"type":"identity","id":1,"protocol":1,"name":"x","games":[],"author":null,"extra":[1]}'
    )
    assert isinstance(msg, Identity) and msg.author is None and not msg.supports("kamisado", "x")
    info = decode_bot_message(b'{"type":"info","id":3,"depth":null,"text":"hi"}')
    assert isinstance(info, Info) and info.as_dict() == {"text": "hi"}


@pytest.mark.parametrize("cls", [Identity, Ready, Action, Info, Pong])
def test_every_optional_bot_field_accepts_null(cls):
    """protocol.md: "Optional fields may be left out or sent as null" -- for every
    field with a default, of every message a bot writes ("author": null was a fault)."""
    required = {"id": 1, "protocol": 1, "name": "x", "action": "c1-c5", "games": []}
    info = msgspec.structs.fields(cls)
    base = {"type": cls.__struct_config__.tag}
    base |= {f.name: required[f.name] for f in info if f.required}
    for field in info:
        if not field.required:
            line = json.dumps(base | {field.name: None}).encode()
            assert isinstance(decode_bot_message(line), cls), field.name


def test_identity_supports_game_or_game_variant():
    ident = Identity(id=1, protocol=1, name="x", games=["kamisado", "sekigahara/standard"])
    assert ident.supports("kamisado", "marathon")
    assert ident.supports("sekigahara", "standard")
    assert not ident.supports("sekigahara", "other")
    assert not ident.supports("chess", "standard")


@pytest.mark.parametrize(
    ("line", "fragment"),
    [
        (b'{"type":"action","id":"7","action":"c1-c5"}', "$.id"),
        (b'{"type":"action","id":7}', "`action`"),
        (b'{"type":"action","id":7,"action":""}', "$.action"),
        (b'{"type":"go","id":7}', "$.type"),
        (b'{"id":7,"action":"c1-c5"}', "`type`"),
        (b"c1-c5", "malformed"),
        (b'{"type":"info","id":7,"depth":"deep"}', "$.depth"),
        (b'{"type":"pong","id":-1}', "$.id"),
    ],
)
def test_decoding_errors_name_the_field(line, fragment):
    with pytest.raises(ProtocolError) as info:
        decode_bot_message(line)
    assert fragment in str(info.value)
    assert info.value.line == line


def test_expected_answers():
    assert {Hello: Identity, NewGame: Ready, Go: Action, Ping: Pong} == EXPECTED_ANSWER


@given(st.text(), st.integers(min_value=0, max_value=2**53))
def test_any_action_text_survives_framing(text, ident):
    line = encode_line(Action(id=ident, action=text or "x"))
    assert line.count(b"\n") == 1
    assert decode_bot_message(line) == Action(id=ident, action=text or "x")


def test_messages_are_structs_with_type_tags():
    for cls in (Hello, NewGame, Go, Ping, GameOver, Quit, Identity, Ready, Action, Info, Pong):
        assert issubclass(cls, msgspec.Struct)
        assert cls.__struct_config__.tag_field == "type"


# -- framing ---------------------------------------------------------------


async def test_line_reader_splits_chunks_and_joins_fragments():
    send, recv = trio.testing.memory_stream_pair()
    reader = LineReader(recv, max_line=100)
    await send.send_all(b'{"a":1}\n{"b"')
    assert await reader.receive_line() == b'{"a":1}'
    await send.send_all(b':2}\r\n\n   \n{"c":3}\n')
    assert await reader.receive_line() == b'{"b":2}'
    assert await reader.receive_line() == b'{"c":3}'
    await send.send_all(b"tail")
    await send.aclose()
    with pytest.raises(EndOfStream) as info:
        await reader.receive_line()
    assert info.value.partial == b"tail"


async def test_line_reader_exact_limit_is_accepted():
    send, recv = trio.testing.memory_stream_pair()
    reader = LineReader(recv, max_line=10)
    await send.send_all(b"x" * 10 + b"\n")
    assert await reader.receive_line() == b"x" * 10
    await send.send_all(b"y" * 11 + b"\n")
    with pytest.raises(LineTooLong):
        await reader.receive_line()


async def test_over_long_line_is_rejected_without_reading_it_whole():
    """A sender that never ends its line is cut off after max_line bytes.

    The sender keeps writing; the reader must raise while most of the data is
    still unread, i.e. it consumed only about max_line plus one chunk.
    """
    send, recv = trio.testing.memory_stream_pair()
    reader = LineReader(recv, max_line=1000)
    sent = 0

    async def flood():
        nonlocal sent
        block = b"x" * 4096
        while True:
            await send.send_all(block)
            sent += len(block)

    with trio.fail_after(5):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(flood)
            with pytest.raises(LineTooLong) as info:
                await reader.receive_line()
            nursery.cancel_scope.cancel()
    assert "1000 bytes" in str(info.value)
    assert sent < 1000 + 2 * 65536
    with pytest.raises(LineTooLong):  # the stream cannot be resynchronised
        await reader.receive_line()


async def test_send_message_writes_one_line():
    send, recv = trio.testing.memory_stream_pair()
    reader = LineReader(recv)
    await send_message(send, Ping(id=3))
    assert decode_arena_message(await reader.receive_line()) == Ping(id=3)
