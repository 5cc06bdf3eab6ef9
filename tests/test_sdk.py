"""The Python SDK's protocol loop, driven through in-memory pipes."""

from __future__ import annotations

import io

import msgspec

from arena.games import get_game
from arena.protocol.messages import (
    ClockInfo,
    Go,
    Hello,
    NewGame,
    OptionSpec,
    Ping,
    Quit,
    SetOption,
    encode_line,
)
from arena.sdk import Bot, Request, serve


def _go(state, id_: int) -> Go:
    return Go(
        id=id_,
        player=state.current_player(),
        position=state.to_text(),
        observation=state.observation(state.current_player()),
        history=[],
        legal=state.legal_actions(),
        clock=ClockInfo(control="10+0.1", remaining_ms=[10000, 10000], budget_ms=10000),
    )


def test_serve_answers_every_request_in_order() -> None:
    state = get_game("kamisado").new_state("single")

    class Last(Bot):
        name = "last"

        def choose(self, request: Request) -> tuple[str, dict]:
            assert request.state().to_text() == state.to_text()
            assert request.time_budget() > 0
            return request.legal[-1], {"depth": 1, "pv": [request.legal[-1]]}

    lines = [
        Hello(id=1, game="kamisado", variant="single"),
        NewGame(
            id=2,
            game="kamisado",
            variant="single",
            player=0,
            players=["a", "b"],
            position=state.to_text(),
            time_control="10+0.1",
        ),
        _go(state, 3),
        Ping(id=4),
        Quit(),
        Ping(id=5),  # never read: quit ends the loop
    ]
    stdin = io.BytesIO(b"".join(encode_line(m) for m in lines) + b"not json\n")
    stdout = io.BytesIO()
    assert serve(Last(), stdin, stdout) == 0
    out = [msgspec.json.decode(line) for line in stdout.getvalue().splitlines()]
    assert [m["type"] for m in out] == ["identity", "ready", "info", "action", "pong"]
    assert [m["id"] for m in out] == [1, 2, 3, 3, 4]
    assert out[0]["name"] == "last" and out[0]["protocol"] == 1
    assert out[3]["action"] == state.legal_actions()[-1]


def test_garbage_from_the_arena_is_skipped_not_fatal() -> None:
    stdin = io.BytesIO(b"{oops\n" + encode_line(Ping(id=7)))
    stdout = io.BytesIO()
    assert serve(Bot(), stdin, stdout) == 0
    assert msgspec.json.decode(stdout.getvalue()) == {"type": "pong", "id": 7}


def test_sdk_bots_declare_options_and_receive_setoption() -> None:
    state = get_game("kamisado").new_state("single")
    seen: list[dict] = []

    class Tuned(Bot):
        name = "tuned"
        options = (
            OptionSpec(name="Hash", type="int", default=64, min=1, max=1024),
            OptionSpec(name="Style", type="choice", choices=["solid", "wild"]),
        )

        def choose(self, request: Request) -> str:
            seen.append(request.options)
            return request.legal[0]

    lines = [
        Hello(id=1, game="kamisado", variant="single"),
        SetOption(name="Style", value="wild"),
        NewGame(
            id=2,
            game="kamisado",
            variant="single",
            player=0,
            players=["a", "b"],
            position=state.to_text(),
            time_control="10+0.1",
        ),
        _go(state, 3),
        Quit(),
    ]
    stdout = io.BytesIO()
    assert serve(Tuned(), io.BytesIO(b"".join(encode_line(m) for m in lines)), stdout) == 0
    identity = msgspec.json.decode(stdout.getvalue().splitlines()[0])
    assert [o["name"] for o in identity["options"]] == ["Hash", "Style"]
    assert identity["options"][0] == {
        "name": "Hash",
        "type": "int",
        "default": 64,
        "min": 1.0,
        "max": 1024.0,
    }
    assert seen == [{"Hash": 64, "Style": "wild"}]


def test_a_bot_importing_the_sdk_does_not_load_trio() -> None:
    """Every bot process starts by importing arena.sdk: trio (the orchestrator's
    event loop, which no bot uses) was two thirds of that import's time, paid
    twice per game."""
    import subprocess
    import sys

    out = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, arena.sdk; print(sorted(m for m in sys.modules"
            " if m == 'trio' or m.startswith('trio.')))",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert out.stdout.strip() == "[]"
