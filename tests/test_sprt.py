"""``arena sprt``: plays pairs until the test decides, stored and resumable."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from arena.cli import main
from arena.match.record import GameRecord
from arena.stats.sprt import llr_pentanomial
from arena.storage.store import Store
from arena.tools.sprt import SprtState


def _record(first: str, second: str, score: float) -> GameRecord:
    return GameRecord(
        game="kamisado",
        variant="single",
        players=[first, second],
        opening="",
        actions=[],
        score=score,
        reason="home-row",
    )


def test_pairs_are_scored_from_the_tested_bots_side() -> None:
    state = SprtState("a", 0, 5)
    assert not state.add_game("p1", _record("a", "b", 1.0))
    assert state.add_game("p1", _record("b", "a", 1.0))  # a lost with the other side
    assert not state.add_game("p2", _record("a", "b", 1.0))
    assert state.add_game("p2", _record("b", "a", 0.0))  # a won both
    assert state.pair_scores == [1.0, 2.0]
    assert state.pentanomial == (0, 0, 1, 0, 1)
    assert state.llr() == llr_pentanomial((0, 0, 1, 0, 1), 0, 5)


def test_sprt_command_decides_and_resumes_without_playing_more(tmp_path: Path) -> None:
    args = [
        "sprt",
        "random",
        "random",
        "--elo0",
        "0",
        "--elo1",
        "300",
        "--model",
        "logistic",
        "--variant",
        "single",
        "--tc",
        "10+0.1",
        "--max-games",
        "400",
        "--results",
        str(tmp_path),
        "-q",
        "-j",
        "1",
    ]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    last = result.output.strip().splitlines()[-1]
    assert "accepted" in last, last
    directory = tmp_path / "sprt-random-1-random-2"
    with Store.open_existing(directory) as store:
        played = store.count()
    assert 2 <= played < 400  # it stopped at a bound, not at the cap
    again = CliRunner().invoke(main, args)
    assert again.output.strip().splitlines()[-1] == last
    with Store.open_existing(directory) as store:
        assert store.count() == played


def test_the_summary_says_how_much_stronger_not_only_whether() -> None:
    """The first alphabeta v3 SPRT's pairs (docs/ladder.md): 13 won twice, 8 split."""
    state = SprtState("new", 0, 50)
    for score in [2.0] * 13 + [1.0] * 8:
        state.add_pair(score)
    summary = state.summary()
    assert "(0, 0, 8, 0, 13)" in summary
    assert "score 81.0 %, Elo +251 ± 129, nElo +313 ± 105" in summary
    assert "H1 accepted" in summary
    assert "no pair yet" in SprtState("new", 0, 50).summary()


def test_sprt_plays_pairs_from_an_openings_file_in_the_sandbox_mode_given(tmp_path: Path) -> None:
    book = Path(__file__).resolve().parent.parent / "examples" / "openings" / "kamisado-single.txt"
    positions = {line for line in book.read_text().splitlines() if not line.startswith("#")}
    args = [
        "sprt",
        "random",
        "random",
        "--elo0",
        "0",
        "--elo1",
        "300",
        "--model",
        "logistic",
        "--variant",
        "single",
        "--openings",
        str(book),
        "--tc",
        "10+0.1",
        "--max-games",
        "8",
        "--results",
        str(tmp_path),
        "-q",
        "-j",
        "1",
        "--sandbox",
        "none",
    ]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    with Store.open_existing(tmp_path / "sprt-random-1-random-2") as store:
        records = list(store.records())
    assert records and {r.opening for r in records} <= positions
    assert {s.mode for r in records for s in r.sandbox} == {"none"}  # --sandbox none


def test_sprt_refuses_an_openings_file_of_another_variant_in_one_line(tmp_path: Path) -> None:
    book = Path(__file__).resolve().parent.parent / "examples" / "openings" / "kamisado-single.txt"
    args = [
        "sprt",
        "random",
        "random",
        "--variant",
        "standard",
        "--openings",
        str(book),
        "--results",
        str(tmp_path),
        "-q",
    ]
    result = CliRunner().invoke(main, args)
    assert result.exit_code != 0
    assert len(result.output.strip().splitlines()) == 1, result.output
    assert "Traceback" not in result.output
