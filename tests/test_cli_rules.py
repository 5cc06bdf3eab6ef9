"""The rules-core commands: ``arena perft`` and ``arena show``."""

from __future__ import annotations

from click.testing import CliRunner

from arena.cli import main


def test_perft_divide_lists_each_action_and_total() -> None:
    result = CliRunner().invoke(main, ["perft", "2", "--divide"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    counts = dict(line.split() for line in lines if line and "-" in line.split()[0])
    assert len(counts) == 102
    assert sum(int(n) for n in counts.values()) == 1150
    assert "total 1150" in lines
    assert any(line.startswith("time ") and "leaves/s" in line for line in lines)


def test_perft_from_position_text() -> None:
    text = "obvpyrgn/8/8/8/8/8/8/NGRYPVBO b - long 0-0 1 -"
    result = CliRunner().invoke(main, ["perft", "3", "--position", text])
    assert "total 11182" in result.output


def test_show_draws_board_with_initials() -> None:
    result = CliRunner().invoke(
        main, ["show", "-p", "o1vpyrgn/4R3/8/8/8/8/7b+/NG1YPVBO g - standard 0-1 1 g"]
    )
    assert result.exit_code == 0
    assert "GB+" in result.output  # Gold's blue Sumo on h2
    assert "BR" in result.output
    assert "left right" in result.output


def test_bad_position_is_one_line_error() -> None:
    result = CliRunner().invoke(main, ["show", "-p", "nonsense"])
    assert result.exit_code != 0
    assert result.output.strip().count("\n") == 0
    assert "arena: error: position text needs 7 fields" in result.output
    assert "Traceback" not in result.output
