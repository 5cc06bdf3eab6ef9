"""Reports stay small at any size: every game counts in the tables, but only the
latest and the faulted games are listed and replayed; the rest are pointed to."""

from __future__ import annotations

import random
import re
from pathlib import Path

from arena.games import get_game
from arena.match.record import CRASH, ActionRecord, GameRecord
from arena.report import write_reports
from arena.storage.store import Store


def random_record(rng: random.Random, players: list[str], faulty: int | None) -> GameRecord:
    state = get_game("kamisado").new_state("single")
    opening = state.to_text()
    actions = []
    while not state.is_terminal():
        player = state.current_player()
        action = rng.choice(state.legal_actions())
        state.apply_action(action)
        actions.append(ActionRecord(player, action, 1))
    outcome = state.outcome()
    assert outcome is not None
    score, reason = outcome.returns[0], outcome.reason
    if faulty is not None:
        score, reason = (0.0 if faulty == 0 else 1.0), CRASH
    return GameRecord(
        game="kamisado",
        variant="single",
        players=players,
        opening=opening,
        actions=actions,
        score=score,
        reason=reason,
        faulty=faulty,
        final_position=state.to_text(),
    )


def make_store(directory: Path, games: int, faulted: set[int]) -> list[str]:
    rng = random.Random(5)
    keys = []
    with Store.open(directory, name="big", config_text="", fingerprint="x") as store:
        for i in range(games):
            players = ["a", "b"] if i % 2 else ["b", "a"]
            key = f"g{i:03d}/1"
            store.add_game(key, key[:-2], random_record(rng, players, 0 if i in faulted else None))
            keys.append(key)
    return keys


def test_reports_list_the_latest_and_faulted_games_and_count_them_all(tmp_path: Path) -> None:
    faulted = {2, 5, 9, 20, 36}
    keys = make_store(tmp_path, 40, faulted)
    data = write_reports(tmp_path, list_latest=6, list_faulted=2)
    listed = [g.key for g in data.game_list]
    # The 6 latest (34..39, with fault 36), then the 2 latest faulted before them (9, 20).
    assert listed == [keys[9], keys[20], *keys[34:]]
    assert data.games == 40 and data.omitted_games == 32
    assert sum(s.games for s in data.standings) == 80
    assert sum(data.faults.values()) == len(faulted)
    html = (tmp_path / "report.html").read_text()
    embedded = re.findall(r'<script type="application/json" id="replay-(\d+)">', html)
    assert [int(i) for i in embedded] == [10, 21, 35, 36, 37, 38, 39, 40]
    assert 'id="games-omitted" data-omitted="32"' in html
    assert f"arena serve {tmp_path}" in html
    md = (tmp_path / "report.md").read_text()
    games_part = md.split("## Games", 1)[1].split("## Fault details", 1)[0]
    assert [k for k in keys if f"| {k} |" in games_part] == listed
    assert "the other 32 count in every table above" in games_part
    assert f"`arena serve {tmp_path}`" in games_part


def test_a_small_tournament_lists_every_game(tmp_path: Path) -> None:
    keys = make_store(tmp_path, 5, {1})
    data = write_reports(tmp_path)
    assert [g.key for g in data.game_list] == keys and data.omitted_games == 0
    assert "games-omitted" not in (tmp_path / "report.html").read_text()
    assert "arena serve" not in (tmp_path / "report.md").read_text()
