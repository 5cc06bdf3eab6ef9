"""Remote entrants in a tournament file: ``remote = true`` with a token; ``[remote]``.

A token is a password: every mistake is one line that never repeats it, and the
results folder (the stored copy of the file) never holds it.
"""

from __future__ import annotations

import re
import sqlite3
import sys
import tomllib
from pathlib import Path

import msgspec
import pytest
from fake_game import fake_registered  # noqa: F401  (fixture)

from arena.plan.config import ConfigError, load_config, parse_config
from arena.plan.remote import REDACTED, RemoteSettings, entry_tokens
from arena.tournament import Tournament

pytestmark = pytest.mark.usefixtures("fake_registered")

PY = sys.executable
TOKEN = "s3cret-Token_of-the-far-bot"


def tournament(far: str, top: str = "") -> str:
    return f"""
name = "cup"
game = "fake"
{top}

[[bots]]
name = "near"
command = "{PY} bot.py"

[[bots]]
name = "far"
{far}
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "t.toml"
    path.write_text(text)
    return path


def test_a_remote_entry_has_no_command_and_its_token(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, tournament(f'remote = true\ntoken = "{TOKEN}"')))
    far = config.bot("far")
    assert far.remote and far.command is msgspec.UNSET and far.argv == []
    assert far.cwd is None and far.builtin is None
    assert not config.bot("near").remote
    assert entry_tokens(config, "t") == {"far": TOKEN.encode()}
    assert config.remote == RemoteSettings()


def test_token_env_is_read_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAR_TOKEN", TOKEN)
    config = load_config(write(tmp_path, tournament('remote = true\ntoken_env = "FAR_TOKEN"')))
    assert entry_tokens(config, "t") == {"far": TOKEN.encode()}


def test_the_remote_table_and_its_documented_defaults(tmp_path: Path) -> None:
    assert RemoteSettings() == RemoteSettings(connect_timeout=60.0, leeway_ms=100, reconnect_s=30)
    top = "[remote]\nconnect_timeout = 5\nleeway_ms = 40\nreconnect_s = 2.5"
    far = f'remote = true\ntoken = "{TOKEN}"'
    # [remote] after the top keys but before [[bots]]
    config = load_config(write(tmp_path, tournament(far, top)))
    assert config.remote == RemoteSettings(connect_timeout=5, leeway_ms=40, reconnect_s=2.5)
    readme = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```toml\n(name = .*?)```", readme, re.S)
    assert block is not None
    assert tomllib.loads(block[1])["remote"] == msgspec.structs.asdict(RemoteSettings())


@pytest.mark.parametrize(
    ("far", "top", "expected"),
    [
        ("remote = true", "", r"bots\[1\] \(far\)\.token: a remote entrant needs either token"),
        (
            f'remote = true\ntoken = "{TOKEN}"\ntoken_env = "X"',
            "",
            r"\(far\)\.token: a remote entrant needs either",
        ),
        (
            f'remote = true\ntoken = "{TOKEN}"\ncommand = "x"',
            "",
            r"\(far\)\.command: .* no command",
        ),
        (f'remote = true\ntoken = "{TOKEN}"\ncwd = "."', "", r"\(far\)\.cwd: .* no cwd"),
        (
            f'remote = true\ntoken = "{TOKEN}"\nsandbox_net = true',
            "",
            r"\(far\)\.sandbox_net: .* no sandbox_net",
        ),
        ('remote = true\ntoken = "short-one"', "", r"\(far\)\.token: expected a token of 16"),
        ('remote = true\ntoken = "with spaces in this token"', "", r"expected a token of 16"),
        ('remote = true\ntoken_env = "1BAD"', "", r"\(far\)\.token_env: expected the name of"),
        (f'command = "{PY}"\ntoken = "{TOKEN}"', "", r"\(far\)\.token: only a remote entrant"),
        ("", "", r"bots\[1\] \(far\): missing required key `command` \(or remote = true"),
        (f'remote = true\ntoken = "{TOKEN}"', 'clock = "cpu"', r"\(far\)\.remote: clock = 'cpu'"),
        (f'remote = true\ntoken = "{TOKEN}"', "[remote]\nleeway_ms = -1", r"remote\.leeway_ms"),
        (f'remote = true\ntoken = "{TOKEN}"', "[remote]\nconnect_timeout = 0", r"connect_timeout"),
        (f'remote = true\ntoken = "{TOKEN}"', "[remote]\nretries = 3", r"unknown key `retries`"),
        ('remote = true\ntoken_env = "ARENA_UNSET_TOKEN"', "", r"ARENA_UNSET_TOKEN is unset"),
        (f'remote = true\ntoken = "{REDACTED}"', "", r"\(far\)\.token: this token was redacted"),
    ],
)
def test_every_remote_mistake_is_one_line_without_the_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, far: str, top: str, expected: str
) -> None:
    monkeypatch.delenv("ARENA_UNSET_TOKEN", raising=False)
    with pytest.raises(ConfigError) as info:
        load_config(write(tmp_path, tournament(far, top)))
    message = str(info.value)
    assert "\n" not in message and message.startswith(str(tmp_path))
    assert re.search(expected, message), message
    for secret in (TOKEN, "short-one", "with spaces"):
        assert secret not in message


def test_a_bad_token_in_the_environment_is_not_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("FAR_TOKEN", "tiny")
    with pytest.raises(ConfigError, match=r"token_env: FAR_TOKEN: expected a token") as info:
        load_config(write(tmp_path, tournament('remote = true\ntoken_env = "FAR_TOKEN"')))
    assert "tiny" not in str(info.value)


def stored_config(directory: Path) -> str:
    with sqlite3.connect(directory / "games.sqlite") as db:
        return db.execute("SELECT config_toml FROM tournament").fetchone()[0]


def test_the_results_never_hold_the_token(tmp_path: Path) -> None:
    """The store keeps the tournament file; a results folder is shared, a token is not.
    What the workers and Ray actors get is the redacted copy too."""
    escaped = TOKEN.replace("T", "\\u0054")  # the same token, spelled otherwise
    far = f'remote = true\ntoken = "{escaped}"  # a comment with a "quote" and a #'
    path = write(tmp_path, tournament(far))
    text = path.read_text()
    config = load_config(path)
    run = Tournament(config, text, results_root=tmp_path / "results", config_path=path)
    try:
        assert run.tokens == {"far": TOKEN.encode()}
        assert run.config.bot("far").token == REDACTED
        assert TOKEN not in run.config_text and TOKEN not in repr(run.config)
        stored = stored_config(run.directory)
    finally:
        run.close()
    assert tomllib.loads(stored)["bots"][1]["token"] == REDACTED
    assert stored.replace(f'"{REDACTED}"', f'"{escaped}"') == text  # nothing else touched
    for file in run.directory.rglob("*"):
        if file.is_file():
            assert TOKEN.encode() not in file.read_bytes(), file
    # the stored copy parses (workers and Ray actors parse it) but cannot be run again
    assert parse_config(stored, path).bot("far").token == REDACTED
    again = write(tmp_path, stored)
    with pytest.raises(ConfigError, match="this token was redacted"):
        load_config(again)


def test_a_token_written_elsewhere_in_the_file_stops_the_run(tmp_path: Path) -> None:
    far = f'remote = true\ntoken = "{TOKEN}"\n# the token is {TOKEN}'
    path = write(tmp_path, tournament(far))
    config = load_config(path)
    with pytest.raises(ConfigError, match="a token also appears outside") as info:
        Tournament(config, path.read_text(), results_root=tmp_path / "results", config_path=path)
    assert TOKEN not in str(info.value)
    assert not (tmp_path / "results" / "cup" / "games.sqlite").exists()


def test_run_without_web_and_check_bot_from_say_what_a_remote_entrant_needs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from arena.cli import main

    monkeypatch.chdir(tmp_path)
    path = write(tmp_path, tournament(f'remote = true\ntoken = "{TOKEN}"'))
    done = CliRunner().invoke(main, ["run", str(path)])
    assert done.exit_code != 0
    assert "remote entrants (far) connect through the web server: add --web" in done.output
    assert not (tmp_path / "results").exists()
    done = CliRunner().invoke(main, ["check-bot", "--from", str(path), "far"])
    assert done.exit_code != 0 and "'far' is a remote entrant" in done.output
    assert TOKEN not in done.output
