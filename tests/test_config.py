"""Tournament files: good ones load resolved, every bad one fails in one clear line."""

from __future__ import annotations

import importlib.util
import os
import sys
import types
from pathlib import Path

import needs
import pytest
from fake_game import fake_registered  # noqa: F401  (fixture)

from arena.plan import builtins
from arena.plan.config import ConfigError, TournamentConfig, load_config, parse_config

pytestmark = pytest.mark.usefixtures("fake_registered")

PY = sys.executable


def write(tmp_path: Path, text: str, name: str = "t.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def two_bots(extra: str = "", top: str = "") -> str:
    return f"""
name = "cup"
game = "fake"
{top}

[[bots]]
name = "alpha"
command = "{PY} -u bot.py --fast"

[[bots]]
name = "beta"
command = ["{PY}", "other.py"]
args = ["--level", "3"]
{extra}
"""


def test_minimal_file_loads_with_defaults(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, two_bots()))
    assert isinstance(config, TournamentConfig)
    assert config.name == "cup"
    assert config.game == "fake"
    assert config.variant == "standard"  # resolved to the game's default
    assert config.tc == "10+0.1"
    assert config.format == "round-robin"
    assert config.games_per_pairing == 2
    assert config.concurrency == (os.cpu_count() or 1)
    assert config.seed == 0
    assert config.max_plies == 1000
    assert config.openings.plies == 0 and config.openings.file is None
    assert config.limits.memory_mb == 2048 and config.limits.processes is None
    assert config.faults.restart is True and config.faults.disqualify_after is None


def test_commands_are_resolved(tmp_path: Path) -> None:
    config = load_config(write(tmp_path, two_bots()))
    alpha, beta = config.bots
    assert alpha.command == [os.path.abspath(PY), "-u", "bot.py", "--fast"]
    assert alpha.argv == alpha.command
    assert beta.argv == [os.path.abspath(PY), "other.py", "--level", "3"]
    # default: the program's folder (no script here: the one the interpreter lies in,
    # not where a link leads), never the TOML's
    assert (
        alpha.cwd
        == os.path.realpath(os.path.dirname(os.path.abspath(PY)))
        != str(tmp_path.resolve())
    )


def test_a_bot_without_cwd_starts_in_its_programs_folder(tmp_path: Path) -> None:
    """Not in the tournament file's folder, where the other entrants' files lie (issue 22)."""
    (tmp_path / "bots" / "alpha").mkdir(parents=True)
    (tmp_path / "bots" / "alpha" / "bot.py").write_text("")
    text = two_bots().replace(f'"{PY} -u bot.py --fast"', f'"{PY} bots/alpha/bot.py --fast"')
    text = text.replace(f'command = ["{PY}", "other.py"]', 'command = ["sh", "-c", "true"]')
    alpha, beta = load_config(write(tmp_path, text)).bots
    script = str((tmp_path / "bots" / "alpha" / "bot.py").resolve())
    assert alpha.command == [os.path.abspath(PY), script, "--fast"]
    assert alpha.cwd == os.path.dirname(script)
    assert beta.cwd is None  # a system program alone (sh): its private /tmp in the sandbox


def test_sandbox_user_must_exist_and_not_be_root(tmp_path: Path) -> None:
    for user, why in (("no-such-user-xyz", "no user 'no-such-user-xyz'"), ("root", "is root")):
        text = two_bots(top=f'[sandbox]\nuser = "{user}"')
        with pytest.raises(ConfigError, match=rf"sandbox\.user: .*{why}"):
            load_config(write(tmp_path, text))


def test_full_file(tmp_path: Path) -> None:
    (tmp_path / "bots").mkdir()
    script = tmp_path / "bots" / "mybot"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    (tmp_path / "openings.txt").write_text("# comment\nfake:standard:ab\n\nfake:standard:c\n")
    text = f"""
name = "gauntlet-1"
game = "fake"
variant = "long"
tc = "5+0.05"
format = "gauntlet"
challengers = ["new"]
games_per_pairing = 4
concurrency = 3
seed = 42
max_plies = 200

[openings]
file = "openings.txt"

[limits]
memory_mb = 512
cpu_seconds = 600
processes = 64
file_size_mb = 1

[faults]
restart = false
disqualify_after = 0.25
min_games = 8

[[bots]]
name = "new"
command = "./mybot --x"
cwd = "bots"
env = {{ SEED = "1" }}
tc = "2/move"

[[bots]]
name = "old"
command = "bots/mybot"

[[bots]]
name = "older"
command = "{PY}"
"""
    config = load_config(write(tmp_path, text))
    new = config.bot("new")
    assert new.command == [str(script.resolve()), "--x"]
    assert new.cwd == str((tmp_path / "bots").resolve())
    assert new.env == {"SEED": "1"}
    assert config.time_control("new") == "2/move"
    assert config.time_control("old") == "5+0.05"
    assert config.bot("old").command == [str(script.resolve())]
    assert config.openings.file == str((tmp_path / "openings.txt").resolve())
    # The checked positions are kept: the schedule does not read the file again.
    assert config.openings.positions == ["fake:standard:ab", "fake:standard:c"]
    assert config.limits.cpu_seconds == 600
    assert config.faults.disqualify_after == 0.25
    assert config.challengers == ["new"]
    assert config.variant == "long"


def test_bare_name_found_on_path(tmp_path: Path) -> None:
    sh = needs.tool("sh")
    config = load_config(write(tmp_path, two_bots().replace(f'"{PY} -u', '"sh -u', 1)))
    assert config.bots[0].command[0] == os.path.abspath(sh)


def test_builtin_bots_are_the_installed_arena_bots_whatever_bots_is_at_hand(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``builtin:`` names the installed ``arena.bots`` scripts, found by path: neither a
    ``bots`` package already imported nor a user's ``bots/`` folder in the current
    folder (first on ``sys.path``, as in a Ray node's shipped working directory)
    stands in for them."""
    installed = Path(importlib.util.find_spec("arena.bots").origin).parent  # type: ignore[union-attr]
    theirs = tmp_path / "bots"
    theirs.mkdir()
    (theirs / "__init__.py").write_text("def resolve_builtin(name): return ['/bin/false']\n")
    (theirs / "random_bot.py").write_text("raise SystemExit('not the built-in')\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setitem(sys.modules, "bots", types.ModuleType("bots"))
    text = two_bots().replace(f'"{PY} -u bot.py --fast"', '"builtin:random --seed 3"')
    config = load_config(write(tmp_path, text))
    assert config.bots[0].command == [PY, str(installed / "random_bot.py"), "--seed", "3"]

    bad = two_bots().replace(f'"{PY} -u bot.py --fast"', '"builtin:nope"')
    with pytest.raises(ConfigError, match=r"bots\[0\] \(alpha\)\.command: unknown built-in"):
        load_config(write(tmp_path, bad))


def test_parse_config_takes_text(tmp_path: Path) -> None:
    config = parse_config(two_bots().encode(), tmp_path / "virtual.toml")
    assert config.bots[0].cwd == os.path.realpath(os.path.dirname(os.path.abspath(PY)))


NOT_EXEC = "notexec.sh"

# (TOML text, substrings the one-line message must contain)
BAD: dict[str, tuple[str, list[str]]] = {
    "syntax": (two_bots() + "\nseed = = 3\n", ["TOML syntax error", "line"]),
    "unknown top key": (two_bots(top="concurency = 2"), ["unknown key `concurency`"]),
    "unknown bot key": (
        two_bots(extra='comand = "x"'),
        ["bots[1] (beta)", "unknown key `comand`"],
    ),
    "wrong type": (two_bots(top="seed = 'x'"), ["seed:", "expected `int`, got `str`"]),
    "wrong command type": (
        two_bots(extra="").replace(f'"{PY} -u bot.py --fast"', "3"),
        ["bots[0] (alpha).command", "expected `str | array`"],
    ),
    "missing name": (two_bots().replace('name = "cup"', ""), ["missing required key `name`"]),
    "bad tc": (two_bots(top='tc = "fast"'), ["tc:", "fast"]),
    "zero tc": (two_bots(top='tc = "0+0"'), ["tc:"]),
    "bad bot tc": (two_bots(extra='tc = "1+"'), ["bots[1] (beta).tc"]),
    "duplicate names": (
        two_bots().replace('name = "beta"', 'name = "alpha"'),
        ["bots[1].name", "duplicate bot name 'alpha'"],
    ),
    "bad bot name": (two_bots().replace('name = "beta"', 'name = "be ta"'), ["bots[1].name"]),
    "bad tournament name": (two_bots().replace('"cup"', '"a/b"'), ["name:", "'a/b'"]),
    "gauntlet without challengers": (
        two_bots(top='format = "gauntlet"'),
        ["challengers:", "gauntlet needs"],
    ),
    "unknown challenger": (
        two_bots(top='format = "gauntlet"\nchallengers = ["gamma"]'),
        ["challengers[0]", "unknown bot 'gamma'"],
    ),
    "only challengers": (
        two_bots(top='format = "gauntlet"\nchallengers = ["alpha", "beta"]'),
        ["challengers:", "not a challenger"],
    ),
    "challengers in round robin": (two_bots(top='challengers = ["alpha"]'), ["challengers:"]),
    "bad format": (two_bots(top='format = "league"'), ["format:", "round-robin", "swiss"]),
    "unknown game": (two_bots().replace('game = "fake"', 'game = "chess"'), ["game:", "chess"]),
    "unknown variant": (two_bots(top='variant = "huge"'), ["variant:", "huge", "standard"]),
    "odd games per pairing": (
        two_bots(top="games_per_pairing = 3"),
        ["games_per_pairing:", "even"],
    ),
    "zero games per pairing": (two_bots(top="games_per_pairing = 0"), ["games_per_pairing:"]),
    "zero concurrency": (two_bots(top="concurrency = 0"), ["concurrency:", ">= 1"]),
    "one bot": (
        two_bots().split("[[bots]]")[0] + "[[bots]]" + two_bots().split("[[bots]]")[1],
        ["bots:", "at least two"],
    ),
    "missing program": (
        two_bots().replace(f'"{PY} -u', '"no-such-program-xyz -u'),
        ["bots[0] (alpha).command", "'no-such-program-xyz' not found on PATH"],
    ),
    "missing file": (
        two_bots().replace(f'"{PY} -u', '"./nothing-here -u'),
        ["bots[0] (alpha).command", "no executable file", "nothing-here"],
    ),
    "not executable": (
        two_bots().replace(f'"{PY} -u', f'"./{NOT_EXEC} -u'),
        ["bots[0] (alpha).command", "not executable"],
    ),
    "empty command": (two_bots().replace(f'"{PY} -u bot.py --fast"', '""'), ["empty"]),
    "unbalanced quote": (
        two_bots().replace(f'"{PY} -u bot.py --fast"', '"x \'y"'),
        ["bots[0] (alpha).command", "cannot split"],
    ),
    "missing cwd": (two_bots(extra='cwd = "nowhere"'), ["bots[1] (beta).cwd", "nowhere"]),
    "builtin without package": (
        two_bots().replace(f'"{PY} -u bot.py --fast"', '"builtin:random"'),
        ["bots[0] (alpha).command", "builtin:random", "built-in bots are not installed"],
    ),
    "openings both": (
        two_bots(top='[openings]\nplies = 2\nfile = "o.txt"'),
        ["openings:", "not both"],
    ),
    "openings missing file": (
        two_bots(top='[openings]\nfile = "none.txt"'),
        ["openings.file", "none.txt"],
    ),
    "openings bad position": (
        two_bots(top='[openings]\nfile = "bad.txt"'),
        ["openings.file", "bad.txt:2", "not a fake position"],
    ),
    "negative plies": (two_bots(top="[openings]\nplies = -1"), ["openings.plies"]),
    "openings positions": (
        two_bots(top='[openings]\npositions = ["fake:standard:a"]'),
        ["openings:", "unknown key `positions`"],
    ),
    "disqualify share": (
        two_bots(top="[faults]\ndisqualify_after = 1.5"),
        ["faults.disqualify_after", "<= 1"],
    ),
    "unknown limit": (two_bots(top="[limits]\nmemory = 5"), ["limits", "unknown key `memory`"]),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_every_mistake_is_one_readable_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str
) -> None:
    # No built-in bots installed for the builtin case, whatever the tree holds.
    monkeypatch.setattr(builtins, "folder", lambda: None)
    (tmp_path / NOT_EXEC).write_text("#!/bin/sh\n")
    (tmp_path / NOT_EXEC).chmod(0o644)
    (tmp_path / "bad.txt").write_text("fake:standard:a\nchess:startpos\n")
    text, expected = BAD[case]
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith(f"{path}: ")
    for part in expected:
        assert part in message, message


def test_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "absent.toml")


def test_the_readmes_faults_block_shows_the_defaults() -> None:
    """The README's example ``[faults]`` is what a file without one gets (issue 34:
    it showed a disqualification the defaults never made)."""
    import re
    import tomllib

    import msgspec

    from arena.plan.config import Faults

    readme = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```toml\n(name = .*?)```", readme, re.S)
    assert block is not None
    shown = tomllib.loads(block[1])["faults"]
    defaults = {k: v for k, v in msgspec.structs.asdict(Faults()).items() if v is not None}
    assert shown == defaults
    assert "# disqualify_after = " in block[1] and "default: never" in block[1]
