"""Engine options (declared in ``identity``, set by a tournament entry, sent as
``setoption`` before ``newgame``) and the operator's ``[protocol]`` settings."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.engine.bot import Engine
from arena.engine.config import EngineConfig
from arena.engine.errors import EngineProtocolError
from arena.engine.options import OptionError, check_declaration, check_options, sample_values
from arena.engine.sandbox import Sandbox
from arena.games import get_game
from arena.plan.config import ConfigError, load_config
from arena.plan.launch import entry_config
from arena.protocol.messages import NewGame, OptionSpec, SetOption

BOT = str(Path(__file__).with_name("author_bot.py"))
HASH = {"name": "Hash", "type": "int", "default": 64, "min": 1, "max": 1024}
STYLE = {"name": "Style", "type": "choice", "default": "solid", "choices": ["solid", "wild"]}
DECLARED = {s["name"]: OptionSpec(**s) for s in (HASH, STYLE)}  # type: ignore[arg-type]


def writable_grant(folder: Path) -> Sandbox:
    """A writable grant of ``folder`` that the bot's user (``nobody`` under a root
    arena) can write in."""
    folder.chmod(0o777)
    return Sandbox(rw=[str(folder)])


def bot_command(log: Path, *extra: str) -> list[str]:
    return [sys.executable, BOT, "--log", str(log), "--options", json.dumps([HASH, STYLE]), *extra]


def received(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_values_are_checked_against_the_declaration() -> None:
    assert check_options(DECLARED, {"Hash": 128, "Style": "wild"}, bot="b") == [
        SetOption(name="Hash", value=128),
        SetOption(name="Style", value="wild"),
    ]
    cases = {
        "Threads": "option 'Threads': b declares no such option (it has: Hash, Style)",
        "Hash": "option Hash: expected a value in 1..1024 (b declares int 1..1024, default 64), "
        "got 5000",
    }
    with pytest.raises(OptionError) as err:
        check_options(DECLARED, {"Threads": 2}, bot="b")
    assert str(err.value) == cases["Threads"]
    with pytest.raises(OptionError) as err:
        check_options(DECLARED, {"Hash": 5000}, bot="b")
    assert str(err.value) == cases["Hash"]
    for bad in ({"Hash": 1.5}, {"Hash": True}, {"Hash": "64"}, {"Style": "odd"}):
        with pytest.raises(OptionError):
            check_options(DECLARED, bad, bot="b")


def test_declarations_are_checked_and_sampled() -> None:
    assert check_declaration(DECLARED["Hash"]) is None
    assert "does not fit" in str(
        check_declaration(OptionSpec(name="H", type="int", default=0, min=1))
    )
    assert "choices" in str(check_declaration(OptionSpec(name="S", type="choice")))
    assert sample_values(DECLARED["Hash"]) == [64, 1, 1024]
    assert sample_values(OptionSpec(name="B", type="bool", default=True)) == [True, False]
    assert sample_values(DECLARED["Style"]) == ["solid", "wild"]


async def test_engine_sends_setoption_before_every_newgame(tmp_path: Path) -> None:
    log = tmp_path / "log"
    config = EngineConfig(
        name="b", command=bot_command(log), options={"Hash": 128}, sandbox=writable_grant(tmp_path)
    )
    state = get_game("kamisado").new_state()
    newgame = NewGame(
        game="kamisado",
        variant="standard",
        player=0,
        players=["b", "x"],
        position=state.observation_text(0),
        time_control="10",
    )
    async with Engine(config) as engine:
        ident = await engine.start("kamisado", "standard")
        assert ident.author is None and ident.declared_options["Hash"].max == 1024
        await engine.new_game(newgame)
        await engine.new_game(newgame)
    types = [(m["type"], m.get("value")) for m in received(log)]
    assert types == [
        ("hello", None),
        ("setoption", 128),
        ("newgame", None),
        ("setoption", 128),
        ("newgame", None),
        ("quit", None),
    ]


async def test_a_bot_without_options_never_sees_setoption(tmp_path: Path) -> None:
    log = tmp_path / "log"
    command = [sys.executable, BOT, "--log", str(log)]  # declares no options
    state = get_game("kamisado").new_state()
    async with Engine(
        EngineConfig(name="old", command=command, sandbox=writable_grant(tmp_path))
    ) as engine:
        await engine.start("kamisado", "standard")
        await engine.new_game(
            NewGame(
                game="kamisado",
                variant="standard",
                player=0,
                players=["old", "x"],
                position=state.to_text(),
                time_control="10",
            )
        )
    assert "setoption" not in [m["type"] for m in received(log)]


async def test_an_undeclared_option_fails_the_start(tmp_path: Path) -> None:
    config = EngineConfig(
        name="b",
        command=bot_command(tmp_path / "log"),
        options={"Ponder": True},
        sandbox=writable_grant(tmp_path),
    )
    async with Engine(config) as engine:
        with pytest.raises(EngineProtocolError, match="Ponder"):
            await engine.start("kamisado", "standard")


def tournament(tmp_path: Path, options: str, protocol: str = "") -> Path:
    tmp_path.mkdir(exist_ok=True)
    tmp_path.chmod(0o777)  # sandbox_rw = ["."]: the bot runs as nobody under a root arena
    toml = tmp_path / "t.toml"
    toml.write_text(f"""
name = "opts"
variant = "single"
tc = "5+0.1"
games_per_pairing = 2
concurrency = 1
{protocol}
[[bots]]
name = "author"
command = {json.dumps(bot_command(tmp_path / "log"))}
options = {options}
sandbox_rw = ["."]
[[bots]]
name = "random"
command = "builtin:random"
""")
    return toml


def test_tournament_options_and_protocol_settings_load(tmp_path: Path) -> None:
    protocol = "[protocol]\nhandshake_timeout = 2.5\nmax_line = 70000"
    config = load_config(tournament(tmp_path, '{ Hash = 256, Style = "wild" }', protocol))
    assert config.bot("author").options == {"Hash": 256, "Style": "wild"}
    engine = entry_config(config, "author")
    assert (engine.options, engine.handshake_timeout, engine.max_line) == (
        {"Hash": 256, "Style": "wild"},
        2.5,
        70000,
    )
    with pytest.raises(ConfigError, match=r"protocol\.max_line"):
        load_config(tournament(tmp_path, "{}", "[protocol]\nmax_line = 10"))


def test_run_sends_options_and_rejects_a_bad_one_before_the_first_game(tmp_path: Path) -> None:
    runner = CliRunner()
    bad = runner.invoke(
        main,
        [
            "run",
            str(tournament(tmp_path, "{ Hash = 5000 }")),
            "-q",
            "--results",
            str(tmp_path / "r"),
            "--no-report",
        ],
    )
    assert bad.exit_code != 0
    lines = bad.output.strip().splitlines()
    assert len(lines) == 1, lines
    assert "bots[0] (author).options: option Hash: expected a value in 1..1024" in lines[0]
    assert "got 5000" in lines[0] and "Traceback" not in bad.output
    assert not (tmp_path / "r" / "opts" / "games").exists()
    tmp_path = tmp_path / "good"
    good = runner.invoke(
        main,
        [
            "run",
            str(tournament(tmp_path, "{ Hash = 8 }")),
            "-q",
            "--results",
            str(tmp_path / "r2"),
            "--no-report",
            "--max-line",
            "70000",
            "--workers",
            "1",
        ],
    )
    assert good.exit_code == 0, good.output
    lines = received(tmp_path / "log")
    hellos = [m for m in lines if m["type"] == "hello"]
    assert hellos and all(m["max_line"] == 70000 for m in hellos)
    for i, m in enumerate(lines):
        if m["type"] == "newgame":
            assert lines[i - 1] == {"type": "setoption", "name": "Hash", "value": 8}
