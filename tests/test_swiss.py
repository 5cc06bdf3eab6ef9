"""Swiss pairing (arena/plan/swiss.py) and its rounds drawn from results (rounds.py):
properties over random results, checked against a brute-force search of every
matching, and the draw replayed from any prefix of the stored games."""

from __future__ import annotations

import random
from collections import Counter

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.plan.config import ConfigError, Faults, TournamentConfig, parse_config
from arena.plan.rounds import Rounds, StoredGame
from arena.plan.swiss import (
    Drawn,
    SwissScores,
    default_rounds,
    initial_order,
    matching_cost,
    pair_round,
)


def all_draws(players: list[str]) -> list[Drawn]:
    """Every possible draw of ``players``: each perfect matching, a bye if odd."""
    if not players:
        return [Drawn((), None)]
    if len(players) % 2:
        out = []
        for i, bye in enumerate(players):
            rest = players[:i] + players[i + 1 :]
            out += [Drawn(d.pairings, bye) for d in all_draws(rest)]
        return out
    first, rest = players[0], players[1:]
    out = []
    for i, other in enumerate(rest):
        remaining = rest[:i] + rest[i + 1 :]
        for d in all_draws(remaining):
            out.append(Drawn(((first, other), *d.pairings), None))
    return out


def random_scores(draw: st.DrawFn, players: list[str]) -> SwissScores:
    """Scores and meetings of a few earlier rounds with random results."""
    scores = SwissScores()
    rounds = draw(st.integers(0, len(players)))
    for _ in range(rounds):
        order = draw(st.permutations(players))
        if len(order) % 2:
            scores.bye(order[-1], 2.0)
        for a, b in zip(order[0::2], order[1::2], strict=False):
            scores.pairing(a, b)
            for _ in range(2):
                scores.game(a, b, draw(st.sampled_from([0.0, 0.5, 1.0])))
    return scores


@st.composite
def situations(draw: st.DrawFn) -> tuple[list[str], SwissScores]:
    n = draw(st.integers(2, 7))
    players = [f"p{i}" for i in range(n)]
    return players, random_scores(draw, players)


@settings(max_examples=150, deadline=None)
@given(situations())
def test_the_draw_is_optimal_among_every_matching(case: tuple[list[str], SwissScores]) -> None:
    """No entrant gets a second bye while one has none; no pairing repeats while a
    fresh matching exists (fewest rematches); the total score difference is the
    smallest any matching with those allows (brute force over every matching)."""
    players, scores = case
    drawn = pair_round(players, players, scores)
    paired = [p for ab in drawn.pairings for p in ab] + ([drawn.bye] if drawn.bye else [])
    assert sorted(paired) == sorted(players)
    assert (drawn.bye is None) == (len(players) % 2 == 0)
    best = min(matching_cost(d, scores, players) for d in all_draws(players))
    assert matching_cost(drawn, scores, players) == best
    fewest = min(scores.byes[p] for p in players)
    if drawn.bye is not None:
        assert scores.byes[drawn.bye] == fewest
    costs = [matching_cost(d, scores, players) for d in all_draws(players)]
    if any(c[:2] == (best[0], 0) for c in costs):  # a fresh matching without a second bye
        assert all(scores.met[frozenset(ab)] == 0 for ab in drawn.pairings)


def test_the_bye_goes_to_the_lowest_score_and_the_leaders_meet() -> None:
    scores = SwissScores()
    for p, pts in {"a": 2, "b": 2, "c": 1, "d": 1, "e": 0}.items():
        scores.points[p] = pts
    drawn = pair_round(list("abcde"), list("abcde"), scores)
    assert drawn.bye == "e"
    assert drawn.pairings == (("a", "b"), ("c", "d"))


def test_a_rematch_only_when_every_matching_has_one() -> None:
    scores = SwissScores()
    for p, pts in {"a": 2, "b": 2, "c": 0, "d": 0}.items():
        scores.points[p] = pts
    scores.pairing("a", "b")
    # The leaders have met: a meets c and b meets d rather than a rematch on top.
    drawn = pair_round(list("abcd"), list("abcd"), scores)
    assert set(drawn.pairings) in ({("a", "c"), ("b", "d")}, {("a", "d"), ("b", "c")})
    # Two entrants who have met can only meet again.
    scores = SwissScores()
    scores.pairing("a", "b")
    assert pair_round(["a", "b"], ["a", "b"], scores).pairings == (("a", "b"),)


def test_default_rounds() -> None:
    assert [default_rounds(n) for n in (2, 3, 4, 5, 8, 9, 16, 32, 200)] == [
        1,
        2,
        3,
        4,
        5,
        6,
        6,
        7,
        10,
    ]


# -------------------------------------------------------------------- rounds drawn


def swiss_config(
    n: int, seed: int = 1, rounds: int | None = None, **kw: object
) -> TournamentConfig:
    bots = [{"name": f"b{i}", "command": ["/bin/true"]} for i in range(n)]
    raw = {"name": "s", "bots": bots, "format": "swiss", "seed": seed, "variant": "single"}
    if rounds is not None:
        raw["rounds"] = rounds
    raw.update(kw)
    return msgspec.convert(raw, TournamentConfig)


def play_out(
    rounds: Rounds, results: random.Random, *, stop_after: int | None = None
) -> tuple[list[StoredGame], list]:
    """Store games in a shuffled order (as concurrent slots would) until the draw
    finishes or ``stop_after`` games are stored; return the games and each round's draw."""
    games: list[StoredGame] = []
    while True:
        draw = rounds.draw(games)
        stored = {g.key for g in games}
        todo = [(t, n) for t in draw.tasks for n in (1, 2) if t.game_key(n) not in stored]
        if draw.finished:
            return games, draw.record.drawn
        results.shuffle(todo)
        for task, number in todo:
            if stop_after is not None and len(games) >= stop_after:
                return games, draw.record.drawn
            p0, p1 = task.players(number)
            games.append(
                StoredGame(task.game_key(number), p0, p1, results.choice([0.0, 0.5, 1.0]), None)
            )


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 11), st.integers(0, 2**32), st.integers(0, 10_000))
def test_a_resume_at_any_point_draws_the_same(n: int, seed: int, cut: int) -> None:
    """The draw over any prefix of the stored games (a run killed there) agrees with
    the uninterrupted run's, round for round, and continuing from it plays the
    same tournament; nobody gets two byes."""
    config = swiss_config(n, seed=seed % 1000)
    rounds = Rounds(config, opening_source=lambda i: f"o{i}")
    games, drawn = play_out(rounds, random.Random(seed))
    assert len(drawn) == rounds.rounds
    byes = Counter(b.a for r in drawn for b in r.boards if b.how == "bye")
    assert all(count == 1 for count in byes.values())
    prefix = games[: cut % (len(games) + 1)]
    # A resumed run is a new process: a new draw from the file and the stored games.
    resumed = Rounds(config, opening_source=lambda i: f"o{i}")
    partial = resumed.draw(prefix).record.drawn
    assert partial == drawn[: len(partial)]
    # The draw does not depend on the order the games of a round were stored in.
    shuffled = list(games)
    random.Random(cut).shuffle(shuffled)
    by_round = sorted(shuffled, key=lambda g: int(g.key[1 : g.key.index(":")].split(".")[0]))
    assert Rounds(config, opening_source=lambda i: f"o{i}").draw(by_round).record.drawn == drawn


def test_rounds_follow_results_and_every_pairing_is_fresh() -> None:
    config = swiss_config(8, rounds=5)
    rounds = Rounds(config, opening_source=lambda i: f"o{i}")
    games, drawn = play_out(rounds, random.Random(5))
    met = [frozenset((b.a, b.b)) for r in drawn for b in r.boards]
    assert len(met) == len(set(met)) == 5 * 4  # 5 rounds of 4 fresh pairings
    assert len(games) == 5 * 4 * 2
    # Openings: a distinct index per board and round, as the schedule draws them.
    tasks = rounds.draw(games).tasks
    assert sorted(t.index for t in tasks) == list(range(20))
    assert initial_order([f"b{i}" for i in range(8)], 1) == rounds.entrants


def test_a_disqualified_entrant_is_not_paired_again() -> None:
    config = swiss_config(4, rounds=3, faults=Faults(restart=False))
    rounds = Rounds(config, opening_source=lambda i: f"o{i}")
    first = rounds.draw([])
    games = []
    for t in first.tasks:
        for number in (1, 2):
            p0, p1 = t.players(number)
            faulty = 0 if p0 == "b0" else 1 if p1 == "b0" else None
            score = 0.0 if faulty == 0 else 1.0 if faulty == 1 else 0.5
            games.append(StoredGame(t.game_key(number), p0, p1, score, faulty))
    second = rounds.draw(games)
    assert second.record.withdrawn == ["b0"]
    last = second.record.drawn[-1]
    assert last.number == 2
    assert all("b0" not in (b.a, b.b) for b in last.boards)
    assert [b.how for b in last.boards].count("bye") == 1


def _toml(tmp_path, top: str) -> object:
    path = tmp_path / "s.toml"
    path.write_text(
        f'name = "s"\nvariant = "single"\n{top}\n'
        + "".join(f'[[bots]]\nname = "{n}"\ncommand = "builtin:random"\n' for n in "abc")
    )
    return path


@pytest.mark.parametrize(
    ("top", "words"),
    [
        ('format = "swiss"\nrounds = 0', ["rounds:", ">= 1"]),
        ('format = "swiss"\nseeds = ["a", "b", "c"]', ["seeds:", "knockout"]),
        ('format = "swiss"\nchallengers = ["a"]', ["challengers:"]),
        ("rounds = 3", ["format:", "swiss or knockout"]),
        ('format = "swiss"\nrounds = 1001', ["rounds:"]),
    ],
)
def test_bad_swiss_files_are_one_line(tmp_path, top: str, words: list[str]) -> None:
    path = _toml(tmp_path, top)
    with pytest.raises(ConfigError) as info:
        parse_config(path.read_bytes(), path)
    assert "\n" not in str(info.value)
    for word in words:
        assert word in str(info.value)


def test_a_swiss_file_loads(tmp_path) -> None:
    path = _toml(tmp_path, 'format = "swiss"\nrounds = 2')
    config = parse_config(path.read_bytes(), path)
    assert config.format == "swiss" and config.rounds == 2
    rounds = Rounds(config)
    assert rounds.rounds == 2 and rounds.total_games() == 2 * 1 * 2


def test_the_quality_bench_runs(tmp_path) -> None:
    """bench/swiss.py once with tiny parameters (CI runs every bench so): the games
    each format used are the ones its rounds give."""
    import subprocess
    import sys
    from pathlib import Path

    bench = Path(__file__).resolve().parent.parent / "bench" / "swiss.py"
    out = subprocess.run(
        [sys.executable, str(bench), "--smoke", "-n", "8"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    import re

    games = dict(re.findall(r"^  (\S.*?\S)\s+(\d+)\s+\d+%", out, re.M))
    assert "8 entrants" in out
    assert games == {
        "swiss, 5 rounds": "40",
        "round robin cut to 5 rounds": "40",
        "full round robin, 7 rounds": "56",
    }


def test_the_fixed_schedule_refuses_a_swiss() -> None:
    from arena.plan.schedule import build_schedule

    with pytest.raises(ValueError, match="drawn from results"):
        build_schedule(swiss_config(4))
