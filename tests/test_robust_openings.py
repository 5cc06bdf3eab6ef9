"""Openings files are checked position by position at load time: a finished
position, one of another match kind, or a text that is no position is one line
naming the file and the line number, before any bot starts."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from arena.cli import main
from arena.games import get_game

KAMISADO = get_game("kamisado")


def finished_text(variant: str = "single") -> str:
    rng = random.Random(4)
    state = KAMISADO.new_state(variant)
    while not state.is_terminal():
        state.apply_action(rng.choice(state.legal_actions()))
    return state.to_text()


def run_with_openings(tmp_path: Path, lines: list[str], variant: str = "single") -> str:
    (tmp_path / "openings.txt").write_text("\n".join(lines) + "\n")
    bots = "".join(f'[[bots]]\nname = "{n}"\ncommand = "builtin:random"\n' for n in "ab")
    toml = tmp_path / "t.toml"
    toml.write_text(f'name = "t"\nvariant = "{variant}"\n[openings]\nfile = "openings.txt"\n{bots}')
    result = CliRunner().invoke(main, ["run", str(toml), "--results", str(tmp_path / "r")])
    assert result.exit_code == 1, result.output
    output = result.output.strip()
    assert output.startswith("arena: error: ") and "\n" not in output, output
    assert not (tmp_path / "r").exists()
    return output


def test_a_finished_position_is_refused_with_its_line_number(tmp_path: Path) -> None:
    good = KAMISADO.start_text("single")
    output = run_with_openings(tmp_path, ["# openings", good, "", finished_text()])
    where = f"{tmp_path / 'openings.txt'}:4"
    assert f"openings.file: {where}: the game is already over in this position" in output


def test_a_position_of_another_match_kind_is_refused(tmp_path: Path) -> None:
    lines = [KAMISADO.start_text("single"), KAMISADO.start_text("marathon")]
    output = run_with_openings(tmp_path, lines, variant="single")
    assert (
        f"{tmp_path / 'openings.txt'}:2: a position of a marathon match; the tournament "
        "plays single" in output
    )


@pytest.mark.parametrize("bad", ["nonsense", "obvpyrgn/8/8/8/8/8/8/NGRYPVBO b - single 0-0 1"])
def test_a_text_that_is_no_position_names_its_line(tmp_path: Path, bad: str) -> None:
    output = run_with_openings(tmp_path, [KAMISADO.start_text("single"), bad])
    assert f"{tmp_path / 'openings.txt'}:2: not a kamisado position (" in output


def test_a_sekigahara_opening_of_the_other_variant_is_refused(tmp_path: Path) -> None:
    game = get_game("sekigahara")
    siege = game.random_opening("siege", 0, random.Random(1)).to_text()
    battle = game.random_opening("battle", 0, random.Random(1)).to_text()
    (tmp_path / "openings.txt").write_text(f"{battle}\n{siege}\n")
    bots = "".join(f'[[bots]]\nname = "{n}"\ncommand = "builtin:random"\n' for n in "ab")
    toml = tmp_path / "t.toml"
    toml.write_text(
        f'name = "t"\ngame = "sekigahara"\nvariant = "battle"\n[openings]\n'
        f'file = "openings.txt"\n{bots}'
    )
    result = CliRunner().invoke(main, ["run", str(toml), "--results", str(tmp_path / "r")])
    assert result.exit_code == 1
    assert "openings.txt:2: a position of a siege match; the tournament plays battle" in (
        result.output
    )
