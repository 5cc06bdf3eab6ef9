"""Every number in a tournament file and on the command line is range-checked:
one readable line, non-zero exit, no traceback, nothing started."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import main

BOTS = "".join(f'[[bots]]\nname = "{n}"\ncommand = "builtin:random"\n' for n in "ab")

BAD_NUMBERS = {
    "games_per_pairing = 2000000000": "games_per_pairing: expected `int` <= 100000",
    "games_per_pairing = 1000000000000000000000000000000": "games_per_pairing: expected `int` <=",
    "games_per_pairing = 0": "games_per_pairing: expected `int` >= 1",
    "concurrency = 100000": "concurrency: expected `int` <= 1024",
    "concurrency = -1": "concurrency: expected `int` >= 1",
    "seed = 100000000000000000000": "seed: expected `int` <=",
    "max_plies = -5": "max_plies: expected `int` >= 1",
    "max_plies = 10000000000": "max_plies: expected `int` <= 100000",
    'tc = "99999999999+0"': "tc: base must be at most 1000000 s",
    'tc = "10+0 margin=1e9"': "tc: unknown time control option",
    'tc = "100000/10"': "tc: moves per period must be between 1 and 10000",
    "[openings]\nplies = -3": "openings.plies: expected `int` >= 0",
    "[openings]\nplies = 1000000": "openings.plies: expected `int` <= 1000",
    "[limits]\nmemory_mb = 100000000000000": "limits.memory_mb: expected `int` <= 1048576",
    "[limits]\ncpu_seconds = 0": "limits.cpu_seconds: expected `int` >= 1",
    "[limits]\nprocesses = 99999999999": "limits.processes: expected `int` <=",
    "[limits]\nfile_size_mb = -1": "limits.file_size_mb: expected `int` >= 1",
    "[faults]\nmin_games = 10000000000": "faults.min_games: expected `int` <=",
    "[faults]\ndisqualify_after = nan": "faults.disqualify_after: expected `float` > 0.0",
    "[faults]\ndisqualify_after = 2.0": "faults.disqualify_after: expected `float` <= 1.0",
    "[protocol]\nhandshake_timeout = nan": "protocol.handshake_timeout: expected `float` > 0.0",
    "[protocol]\nmax_line = 100000000000": "protocol.max_line: expected `int` <= 1073741824",
}


def tournament_text(line: str) -> str:
    if line.startswith("["):  # a table goes after the top-level keys
        return f'name = "t"\n{BOTS}{line}\n'
    return f'name = "t"\n{line}\n{BOTS}'


@pytest.mark.parametrize("line", sorted(BAD_NUMBERS))
def test_bad_number_in_tournament_file_is_one_line(line: str, tmp_path: Path) -> None:
    toml = tmp_path / "t.toml"
    toml.write_text(tournament_text(line))
    result = CliRunner().invoke(main, ["run", str(toml), "--results", str(tmp_path / "r")])
    assert result.exit_code == 1, result.output
    output = result.output.strip()
    assert output.startswith(f"arena: error: {toml}: "), output
    assert "\n" not in output and "Traceback" not in output
    assert BAD_NUMBERS[line] in output
    assert not (tmp_path / "r").exists()


def test_a_schedule_too_big_to_build_is_refused(tmp_path: Path) -> None:
    bots = "".join(f'[[bots]]\nname = "b{i}"\ncommand = "builtin:random"\n' for i in range(100))
    toml = tmp_path / "t.toml"
    toml.write_text(f'name = "t"\ngames_per_pairing = 1000\n{bots}')
    result = CliRunner().invoke(main, ["run", str(toml), "--results", str(tmp_path / "r")])
    assert result.exit_code == 1
    assert "4950 pairings x 1000 games = 4950000 games, more than the 1000000" in result.output


BAD_OPTIONS = [
    (["play", "random", "random", "--max-plies", "-5"], "'--max-plies': -5 is not in the range"),
    (["play", "random", "random", "--opening-plies", "-3"], "'--opening-plies': -3 is not in"),
    (["play", "random", "random", "--opening-plies", "100000"], "'--opening-plies': 100000"),
    (["play", "random", "random", "--seed", "1" + "0" * 30], "'--seed':"),
    (["play", "random", "random", "--tc", "99999999999"], "base must be at most 1000000 s"),
    (["run", "t.toml", "-j", "0"], "'--concurrency' / '-j': 0 is not in the range"),
    (["run", "t.toml", "--workers", "100000"], "'--workers': 100000 is not in the range"),
    (["check-bot", "--timeout", "nan", "--", "x"], "'--timeout': 'nan' is not a finite number"),
    (["check-bot", "--timeout", "-1", "--", "x"], "'--timeout': -1.0 is not in the range"),
    (["sprt", "a", "b", "--elo1", "inf"], "'--elo1': inf is not in the range"),
    (["sprt", "a", "b", "--elo0", "nan"], "'--elo0': 'nan' is not a finite number"),
    (["sprt", "a", "b", "--alpha", "nan"], "'--alpha': 'nan' is not a finite number"),
    (["sprt", "a", "b", "--max-games", "1000000000"], "'--max-games': 1000000000 is not in"),
    (["perft", "13"], "13 is not in the range 0<=x<=12"),
    (["play", "a", "b", "--handshake-timeout", "nan"], "'nan' is not a finite number"),
    (["play", "a", "b", "--max-line", "10"], "'--max-line': 10 is not in the range"),
    (["--bad"], "No such option '--bad'"),  # arena's own options and commands too
    (["nosuch"], "No such command 'nosuch'"),
]


@pytest.mark.parametrize(("args", "words"), BAD_OPTIONS, ids=[" ".join(a) for a, _ in BAD_OPTIONS])
def test_bad_number_on_the_command_line(args: list[str], words: str, tmp_path: Path) -> None:
    toml = tmp_path / "t.toml"
    toml.write_text(tournament_text("seed = 1"))
    args = [str(toml) if a == "t.toml" else a for a in args]
    result = CliRunner().invoke(main, args)
    assert result.exit_code in (1, 2), result.output
    output = result.output.strip()
    assert output.startswith("arena: error: ") and "\n" not in output, output
    assert words in output
