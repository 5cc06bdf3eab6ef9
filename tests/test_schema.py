"""The published JSON Schemas (``docs/schema/``): up to date, true of real
messages, and enough to write a bot from (``tests/schema_bot.py``)."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import jsonschema
import msgspec
import pytest

from arena.engine.sandbox import SandboxSettings
from arena.games import get_game
from arena.match.clock import Clock, TimeControl
from arena.match.wire import clock_info
from arena.protocol.messages import (
    GameOver,
    Go,
    Hello,
    Identity,
    Info,
    NewGame,
    OptionSpec,
    Ping,
    Quit,
    SetOption,
    encode_line,
)
from arena.protocol.schema import DEFAULT_DIR, render, schemas, stale
from arena.tools.compliance import check_bot

SCHEMA_BOT = [sys.executable, str(Path(__file__).with_name("schema_bot.py")), str(DEFAULT_DIR)]


def validator(name: str) -> jsonschema.Draft202012Validator:
    schema = json.loads((DEFAULT_DIR / name).read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_published_schemas_are_up_to_date() -> None:
    assert stale() == [], "docs/schema is stale: run python -m arena.protocol.schema"
    assert sorted(schemas()) == sorted(p.name for p in DEFAULT_DIR.glob("*.json"))
    assert all(render(s).endswith("}\n") for s in schemas().values())


def _games(name: str, count: int, plies: int = 120):
    """The first ``plies`` states and the last of ``count`` seeded random games of
    each variant (schema validation is slow; a marathon is long)."""
    game = get_game(name)
    for variant in game.variants:
        for seed in range(count):
            rng = random.Random(seed)
            state = game.random_opening(variant, 2, rng)
            ply = 0
            while not state.is_terminal():
                if ply < plies:
                    yield game, variant, state
                state.apply_action(rng.choice(state.legal_actions()))
                ply += 1
            yield game, variant, state


@pytest.mark.parametrize("name", ["kamisado", "sekigahara"])
def test_real_messages_validate_against_the_schemas(name: str) -> None:
    arena, observation = validator("arena-to-bot.json"), validator(f"{name}-observation.json")
    kind = get_game(name).observation_type
    clock = Clock(TimeControl.parse("10+0.1"))
    seen = 0
    for _game, _variant, state in _games(name, 2):
        for player in (0, 1):
            obs = state.observation(player)
            observation.validate(obs)
            assert msgspec.to_builtins(msgspec.convert(obs, kind)) == obs  # exact shape
        if state.is_terminal():
            continue
        player = state.current_player()
        go = Go(
            id=5,
            player=player,
            position=state.observation_text(player),
            observation=state.observation(player),
            history=state.history(player),
            legal=state.legal_actions(),
            clock=clock_info((clock, clock), player),
        )
        arena.validate(json.loads(encode_line(go)))
        seen += 1
    assert seen > 50
    start = get_game(name).new_state()
    for msg in (
        Hello(id=1, game=name, variant="x"),
        Ping(id=2),
        Quit(),
        GameOver(result="1/2-1/2", reason="adjudicated"),
        SetOption(name="Hash", value=8),
        NewGame(
            id=3,
            game=name,
            variant="x",
            player=1,
            players=["a", "b"],
            position=start.to_text(),
            time_control="10+0.1",
        ),
    ):
        arena.validate(json.loads(encode_line(msg)))


def test_bot_messages_validate_and_nulls_are_allowed() -> None:
    bot = validator("bot-to-arena.json")
    spec = OptionSpec(name="Hash", type="int", default=64, min=1, max=1024)
    for msg in (
        Identity(id=1, protocol=1, name="x", games=["kamisado"], options=[spec]),
        Info(id=2, depth=3, score=-12.5, pv=["c1-c5"], nodes=9, text="hi"),
        Info(id=3, depth=1, score=40, pv=["c1-c5"], playouts=1850),
    ):
        bot.validate(json.loads(encode_line(msg)))
    bot.validate(
        {
            "type": "identity",
            "id": 1,
            "protocol": 1,
            "name": "x",
            "games": [],
            "author": None,
            "version": None,
            "options": None,
        }
    )
    with pytest.raises(jsonschema.ValidationError):
        bot.validate({"type": "identity", "id": 1, "protocol": 1, "name": "", "games": []})


def test_the_observation_schema_is_not_vacuous() -> None:
    obs = get_game("kamisado").new_state().observation(0)
    validator("kamisado-observation.json").validate(obs)
    for broken in (
        {**obs, "round": 0},
        {**obs, "required_colour": "teal"},
        {k: v for k, v in obs.items() if k != "you"},
    ):
        with pytest.raises(jsonschema.ValidationError):
            validator("kamisado-observation.json").validate(broken)


@pytest.mark.parametrize("name", ["kamisado", "sekigahara"])
async def test_a_bot_written_from_the_schemas_alone_passes_check_bot(name: str) -> None:
    declared = {"kamisado": "kamisado/standard", "sekigahara": "sekigahara"}[name]
    # A generous clock: this bot validates every line with jsonschema, slow under load.
    checks = await check_bot(
        [*SCHEMA_BOT, declared],
        game=name,
        games=1,
        tc="20+0.2",
        sandbox=SandboxSettings(mode="bwrap"),
    )
    assert [c.line() for c in checks if not c.passed] == []
    assert any(c.name.startswith("game") for c in checks)
