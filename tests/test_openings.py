"""``arena openings generate``: the forced-win check and the books it writes."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from arena.cli import main
from arena.config import read_openings_file
from arena.games import get_game
from arena.openings import forced, wins_by_force

# Black wins in three plies (c1-c7, then every Gold reply opens a path), not sooner.
FORCED_WIN = "2vpyrgn/4P3/3b4/o7/8/5V2/8/NGRY2BO b r single 0-0 1 -"


def test_wins_by_force_sees_a_win_in_three_plies_and_no_sooner() -> None:
    game = get_game("kamisado")
    state = game.state_from_text(FORCED_WIN)
    assert wins_by_force(state, 0, 3)
    assert not wins_by_force(state, 0, 2)
    assert not wins_by_force(state, 1, 3)
    assert forced(state, 3) and not forced(state, 2)
    assert state.to_text() == FORCED_WIN  # looked ahead on clones only


def test_generate_writes_distinct_fair_positions_in_the_books_variant(tmp_path: Path) -> None:
    out = tmp_path / "book.txt"
    result = CliRunner().invoke(main, [
        "openings", "generate", "--variant", "standard", "--plies", "2", "--count", "4",
        "--depth", "3", "--movetime", "0.05", "--max-score", "80", "-o", str(out),
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "4 openings written" in result.output
    texts = read_openings_file(out)
    assert len(texts) == len(set(texts)) == 4
    game = get_game("kamisado")
    for text in texts:
        assert " standard " in text
        state = game.state_from_text(text)
        assert not state.is_terminal()
        # The same board as a single round: nobody wins it by force within 3 plies.
        single = game.state_from_text(text.replace(" standard ", " single "))
        assert not forced(single, 3)
    assert out.read_text().startswith("# arena openings generate --game kamisado")


def test_generate_rejects_a_game_that_deals_its_openings(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, [
        "openings", "generate", "--game", "sekigahara", "--bot", "random",
        "-o", str(tmp_path / "x.txt"),
    ])  # fmt: skip
    assert result.exit_code != 0
    assert "deals its openings" in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "x.txt").exists()
