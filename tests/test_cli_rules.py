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


def _perft_output(*args: str) -> list[str]:
    result = CliRunner().invoke(main, ["perft", *args])
    assert result.exit_code == 0, result.output
    return result.output.splitlines()


def test_perft_divide_agrees_with_perft_across_a_pending_regroup() -> None:
    # Black won round 1 and must choose the regroup: perft counts within the
    # round, so nothing, and the split says so per choice (it used to say 204).
    text = "oO+vpyrgn/8/8/1b6/8/8/2G5/N2YPVBR b - standard 1-0 1 b"
    divided = _perft_output("2", "--divide", "--position", text)
    assert divided[:2] == ["left 0", "right 0"]
    assert "total 0" in divided
    assert "total 0" in _perft_output("2", "--position", text)


def test_perft_divide_adds_up_where_the_round_ends_inside_the_depth() -> None:
    from arena.games.kamisado import GAME

    # Black to move its red on a3: a3-e7 ends the round at once (the rules'
    # deadlock example), other moves end it later or not at all.
    state = GAME.new_state("standard")
    for action in ("c1-a3", "b8-h2"):
        state.apply_action(action)
    for depth in (1, 2, 3):
        split = GAME.perft_divide(state, depth)
        assert sum(n for _, n in split) == GAME.perft(state, depth)
        assert [a for a, _ in split] == state.legal_actions()
