"""A third game in one folder: the arena takes it with no edit anywhere else.

``tests/toy_game`` (a two-lane race, its ``Show`` and a random bot built on
``arena.sdk``) is copied into a temporary site folder beside the ``.dist-info``
that declares its ``arena.games`` entry point, as ``pip install`` of its own
package would leave it. With only that folder on ``PYTHONPATH``, the real
``arena`` command (subprocesses, sandboxed bots) draws it, checks its bot, plays
it, runs a tournament of it and writes its reports, whose replays chromium draws
with the toy's own script.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from browser import page_at

from arena.match.record import GameRecord
from arena.storage.store import Store

TOY = Path(__file__).parent / "toy_game"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The toy game as an installed distribution: its package and its entry point."""
    site = tmp_path_factory.mktemp("site")
    shutil.copytree(TOY, site / "toy_game", ignore=shutil.ignore_patterns("__pycache__"))
    info = site / "toy_game-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-game\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[arena.games]\ntoy = toy_game:GAME\n")
    return site


def arena(site: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """``arena ARGS...`` in a fresh process that sees the toy game only through ``site``."""
    env = {**os.environ, "PYTHONPATH": str(site)}
    return subprocess.run(
        [sys.executable, "-m", "arena.cli", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def bot(site: Path, seed: int) -> list[str]:
    return [sys.executable, str(site / "toy_game" / "toy_bot.py"), str(seed)]


def test_the_arena_alone_does_not_know_the_toy() -> None:
    """Without the site folder there is no toy game: the folder is all that adds it."""
    out = subprocess.run(
        [sys.executable, "-m", "arena.cli", "show", "--game", "toy"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode != 0
    assert "unknown game 'toy'" in out.stderr


def test_show_draws_the_toy_with_its_own_picture(site: Path) -> None:
    out = arena(site, "show", "--game", "toy", "--position", "toy:short:2,5:blue")
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines()[:3] == [" red |..@....|", "blue |.....@.|", "blue to move"]
    assert "legal actions (1): +1" in out.stdout


def test_check_bot_asks_the_toys_decisions(site: Path) -> None:
    out = arena(site, "check-bot", "--game", "toy", "--", *bot(site, 1))
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    # The default Game.check_cases: a decision deep into the last variant.
    for name in ("go: start position", "go: second player", "go: long game"):
        assert any(line.startswith(f"PASS {name}:") for line in lines), out.stdout
    # The built-in random plays the toy too (any game it is offered; the toy's
    # strongest_bot is the default, random): the whole-game stage is played.
    for variant in ("short", "long"):
        played = f"PASS games: {variant} vs random: 2 games, all legal, no fault"
        assert any(line.startswith(played) for line in lines), out.stdout
    assert not any(line.startswith("SKIP") for line in lines), out.stdout


def test_play_referees_a_toy_game(site: Path) -> None:
    command = [" ".join(bot(site, 1)), " ".join(bot(site, 2))]
    out = arena(site, "play", *command, "--game", "toy", "--variant", "long", "--tc", "5+0.1")
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("toy long, 5+0.1: toy-random-1 (red) vs toy-random-2 (blue)")
    # The toy's own figure (State.figures) ends the result line, in its roles' names.
    assert re.fullmatch(r"result (1-0|0-1) finish; cells \d+-\d+ \(red-blue\)", lines[-1]), lines


@pytest.fixture(scope="module")
def cup(site: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A stored round robin of the toy, reported by ``arena report``."""
    results = tmp_path_factory.mktemp("results")
    bots = "".join(
        f'[[bots]]\nname = "r{seed}"\ncommand = {json.dumps(bot(site, seed))}\n'
        for seed in (1, 2, 3)
    )
    toml = results / "toy.toml"
    toml.write_text(
        'name = "toy"\ngame = "toy"\nvariant = "long"\ntc = "5+0.1"\n'
        "games_per_pairing = 2\nseed = 4\n[openings]\nplies = 1\n" + bots
    )
    run = arena(site, "run", str(toml), "--results", str(results), "-q", "--no-report")
    assert run.returncode == 0, run.stdout + run.stderr
    report = arena(site, "report", str(results / "toy"))
    assert report.returncode == 0, report.stdout + report.stderr
    assert "r1" in report.stdout  # the standings were printed
    return results / "toy"


def records(directory: Path) -> list[tuple[str, GameRecord]]:
    with Store.open_existing(directory) as store:
        return list(store.items())


def test_report_md_lists_the_toy_games(cup: Path) -> None:
    stored = records(cup)
    assert len(stored) == 6 and all(r.reason == "finish" for _, r in stored)
    text = (cup / "report.md").read_text(encoding="utf-8")
    assert "6 games (toy)" in text
    # The toy's roles name the columns; its own figure (State.figures) is one.
    assert "| # | key | red | blue | result | cells | reason |" in text
    for key, r in stored:
        cells = r.final_position.split(":")[2].replace(",", "-")
        row = f"| {key} | {r.players[0]} | {r.players[1]} | {r.result} | {cells} | finish |"
        assert row in text, row


def test_report_html_replays_the_toy_with_its_own_picture(cup: Path, browser: Any) -> None:
    stored = records(cup)
    page_text = (cup / "report.html").read_text(encoding="utf-8")
    assert 'R.register("toy"' in page_text and 'id="toy-colours"' in page_text
    assert ".toy-track rect" in page_text
    with page_at(browser, 1200) as (page, errors):
        page.goto((cup / "report.html").as_uri())
        for index, (_, record) in enumerate(stored[:2], start=1):
            page.click(f'button.open[data-index="{index}"]')
            viewer = page.locator(f"#replay-row-{index} .viewer")
            viewer.press("End")
            red, blue = (int(n) for n in record.final_position.split(":")[2].split(","))
            runners = viewer.locator("svg.toy-track circle.runner")
            assert runners.count() == 2
            cells = {
                runners.nth(i).get_attribute("data-name"): runners.nth(i).get_attribute("data-cell")
                for i in range(2)
            }
            assert cells == {"red": str(red), "blue": str(blue)}
            status = viewer.locator(".status").inner_text()
            assert f"ply {len(record.actions)}/{len(record.actions)}" in status
            assert "goal at cell 10" in status  # the toy's own status line
            viewer.screenshot(path=str(cup / f"replay-{index}.png"))
        assert errors == []
