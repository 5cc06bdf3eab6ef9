"""``arena openings generate``: the forced-win check and the books it writes."""

from __future__ import annotations

import shlex
import sys
from collections import Counter
from pathlib import Path

import pytest
import trio
from click.testing import CliRunner

from arena.cli import main
from arena.games import get_game
from arena.plan.config import read_openings_file
from arena.tools.openings import Probe, forced, generate, wins_by_force

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
    result = CliRunner().invoke(
        main,
        [
            "openings",
            "generate",
            "--variant",
            "standard",
            "--plies",
            "2",
            "--count",
            "4",
            "--depth",
            "3",
            "--movetime",
            "0.05",
            "--max-score",
            "80",
            "-o",
            str(out),
        ],
    )
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
    result = CliRunner().invoke(
        main,
        [
            "openings",
            "generate",
            "--game",
            "sekigahara",
            "--bot",
            "random",
            "-o",
            str(tmp_path / "x.txt"),
        ],
    )
    assert result.exit_code != 0
    assert "deals its openings" in result.output
    assert "Traceback" not in result.output
    assert not (tmp_path / "x.txt").exists()


BAD_BOT = [sys.executable, str(Path(__file__).with_name("bad_bot.py"))]
FIRST_LEGAL = [*BAD_BOT, "normal"]  # deterministic: always the first legal action
FAULTS = [*BAD_BOT, "illegal"]  # loses every game at its first decision


def run_generate(probe: Probe, stats: Counter[str]) -> list[str]:
    game = get_game("kamisado")
    return trio.run(
        lambda: generate(
            game,
            "standard",
            plies=2,
            count=3,
            depth=2,
            bot=FIRST_LEGAL,
            check_variant="single",
            max_tries=6,
            probe=probe,
            stats=stats,
        )
    )


def test_probe_rejects_every_walk_the_side_decides() -> None:
    # Two copies of one deterministic bot play the same game from both sides, so
    # the same side wins both games of every pair: each probed walk is a split.
    # Seconds per move, not the default tenths: an answer late under load would
    # lose on time and turn a split pair into a decided one.
    stats: Counter[str] = Counter()
    probe = Probe(FIRST_LEGAL, FIRST_LEGAL, "single", strong_movetime=2.0, weak_movetime=2.0)
    kept = run_generate(probe, stats)
    assert kept == []
    assert stats["split"] > 0
    assert stats["split"] + stats["forced"] + stats["duplicate"] == 6


def test_probe_keeps_walks_where_one_player_wins_from_both_sides() -> None:
    # The second player loses every game, with either side: no pair splits.
    stats: Counter[str] = Counter()
    kept = run_generate(Probe(FIRST_LEGAL, FAULTS, "standard", pairs=2), stats)
    assert len(kept) == stats["kept"] == 3
    assert stats["split"] == 0


def test_generate_cli_records_the_probe_in_the_header(tmp_path: Path) -> None:
    out = tmp_path / "book.txt"
    first, faults = (" ".join(shlex.quote(a) for a in c) for c in (FIRST_LEGAL, FAULTS))
    result = CliRunner().invoke(
        main,
        [
            "openings",
            "generate",
            "--plies",
            "2",
            "--count",
            "2",
            "--depth",
            "2",
            "--bot",
            first,
            "--probe-pairs",
            "1",
            "--probe-bot",
            first,
            "--probe-weak",
            faults,
            "--probe-movetime",
            "0.05",
            "0.02",
            "-o",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    header = [line for line in out.read_text().splitlines() if line.startswith("#")]
    assert "--probe-pairs 1" in header[0] and "--probe-movetime 0.05 0.02" in header[0]
    assert "no probe pair split (1 in single)" in header[1]
    assert header[2].startswith("# walks: 2 kept,") and "0 split" in header[2]
    assert len(read_openings_file(out)) == 2


class Stop(Exception):
    pass


def capture_configs(monkeypatch, seen: list, tool: object = None) -> None:
    """Record each engine's config and stop at the first start: what the bots would
    run under, without running them (the engines ``tool``, a module, starts; by
    default ``openings generate``'s)."""
    if tool is None:
        import arena.tools.openings as tool

    class Recording:
        def __init__(self, config) -> None:
            seen.append(config)

        async def __aenter__(self):
            return self

        async def __aexit__(self, *exc: object) -> bool:
            return False

        async def start(self, *args: object, **kwargs: object) -> None:
            raise Stop

    monkeypatch.setattr(tool, "Engine", Recording)


def test_generate_runs_its_bots_under_a_tournaments_limits(monkeypatch) -> None:
    """Not unbounded: by default a tournament file's [limits] and [sandbox]."""
    from arena.engine.sandbox import Sandbox
    from arena.plan.config import Limits
    from arena.plan.launch import resource_limits

    seen: list = []
    capture_configs(monkeypatch, seen)
    with pytest.raises(Stop):
        run_generate(Probe(FIRST_LEGAL, FAULTS, "standard"), Counter())
    assert [c.name for c in seen] == ["scorer", "strong", "weak"]
    wanted = resource_limits(Limits())
    assert wanted.memory_bytes is not None  # a tournament bounds memory by default
    assert all(c.limits == wanted and c.sandbox == Sandbox() for c in seen)


def test_generate_cli_passes_its_confinement_options(monkeypatch, tmp_path: Path) -> None:
    seen: list = []
    capture_configs(monkeypatch, seen)
    out = tmp_path / "book.txt"
    command = ["openings", "generate", "--bot", shlex.join(FIRST_LEGAL), "-o", str(out)]
    CliRunner().invoke(main, [*command, "--memory-mb", "300", "--sandbox", "none"])
    assert seen and all(c.limits.memory_bytes == 300 << 20 for c in seen)
    assert all(c.sandbox.mode == "none" for c in seen)
