"""Knockout brackets (arena/plan/knockout.py) drawn from results (rounds.py)."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest

from arena.plan.config import ConfigError, TournamentConfig, parse_config
from arena.plan.knockout import bracket_order, decide
from arena.plan.rounds import Rounds, StoredGame


def ko_config(names: list[str], **kw: object) -> TournamentConfig:
    raw: dict[str, object] = {
        "name": "k",
        "bots": [{"name": n, "command": ["/bin/true"]} for n in names],
        "format": "knockout",
        "variant": "single",
        "seeds": names,
    }
    raw.update(kw)
    return msgspec.convert(raw, TournamentConfig)


def stronger(seed: dict[str, int], draws: set[frozenset[str]] = frozenset()):  # noqa: B006
    """Results: the better seed wins every game, except a drawn pairing in ``draws``."""

    def result(p0: str, p1: str) -> float:
        if frozenset((p0, p1)) in draws:
            return 0.5
        return 1.0 if seed[p0] < seed[p1] else 0.0

    return result


def play(rounds: Rounds, result) -> tuple[list[StoredGame], object]:
    games: list[StoredGame] = []
    for _ in range(100):
        draw = rounds.draw(games)
        if draw.finished:
            return games, draw
        stored = {g.key for g in games}
        for t in draw.tasks:
            for n in (1, 2):
                if t.game_key(n) not in stored:
                    p0, p1 = t.players(n)
                    games.append(StoredGame(t.game_key(n), p0, p1, result(p0, p1), None))
    raise AssertionError("the knockout never finished")


def test_bracket_order_keeps_the_best_seeds_apart() -> None:
    assert bracket_order(2) == [1, 2]
    assert bracket_order(4) == [1, 4, 2, 3]
    assert bracket_order(8) == [1, 8, 4, 5, 2, 7, 3, 6]


def test_a_knockout_of_eight_with_a_tied_match_resolved_by_the_rule() -> None:
    """Seeds 4 and 5 draw every game: two extra pairs (the limit) are played, then
    the rule: equal faults, so the better seed (4) goes through."""
    names = [f"s{i}" for i in range(1, 9)]
    rounds = Rounds(ko_config(names, extra_pairs=2), opening_source=lambda i: f"o{i}")
    seed = {n: i + 1 for i, n in enumerate(names)}
    games, draw = play(rounds, stronger(seed, {frozenset(("s4", "s5"))}))
    first = draw.record.drawn[0].boards
    assert [(b.a, b.b) for b in first] == [("s1", "s8"), ("s4", "s5"), ("s2", "s7"), ("s3", "s6")]
    tied = first[1]
    assert tied.pair_keys == ["r1m2.1:s4:s5", "r1m2.2:s4:s5", "r1m2.3:s4:s5"]
    assert (tied.winner, tied.how) == ("s4", "tie: better seed")
    assert [len(b.pair_keys) for b in first] == [1, 3, 1, 1]
    semis = draw.record.drawn[1].boards
    assert [(b.a, b.b, b.winner) for b in semis] == [("s1", "s4", "s1"), ("s2", "s3", "s2")]
    assert draw.record.champion == "s1"
    assert len(games) == 2 * (7 + 2)  # seven matches of one pair, two extra pairs


def test_the_tie_rule_prefers_fewer_faults_then_the_better_seed() -> None:
    seed = {"a": 1, "b": 2}
    assert decide("a", "b", (2.5, 1.5), (0, 0), seed) == ("a", "")
    assert decide("a", "b", (2, 2), (1, 0), seed) == ("b", "tie: fewer faults")
    assert decide("a", "b", (2, 2), (0, 0), seed) == ("a", "tie: better seed")


def test_an_extra_pair_that_breaks_the_tie_ends_the_match() -> None:
    names = ["a", "b"]
    rounds = Rounds(ko_config(names, extra_pairs=3), opening_source=lambda i: f"o{i}")
    draw = rounds.draw([])
    games = [
        StoredGame(k, *draw.tasks[0].players(int(k[-1])), 0.5, None)
        for k in draw.tasks[0].game_keys
    ]
    draw = rounds.draw(games)
    assert [t.key for t in draw.tasks] == ["r1m1.1:a:b", "r1m1.2:a:b"]
    t = draw.tasks[1]
    # b wins the extra pair's first game, the second is drawn: b goes through.
    games += [
        StoredGame(t.game_key(1), "a", "b", 0.0, None),
        StoredGame(t.game_key(2), "b", "a", 0.5, None),
    ]
    draw = rounds.draw(games)
    assert draw.finished and draw.record.champion == "b"
    assert draw.record.drawn[0].boards[0].how == ""


def test_a_knockout_of_five_gives_byes_to_the_top_seeds() -> None:
    names = ["one", "two", "three", "four", "five"]
    rounds = Rounds(ko_config(names), opening_source=lambda i: f"o{i}")
    seed = {n: i + 1 for i, n in enumerate(names)}
    games, draw = play(rounds, stronger(seed))
    first = draw.record.drawn[0].boards
    assert [(b.a, b.b, b.how) for b in first] == [
        ("one", None, "bye"),
        ("four", "five", ""),
        ("two", None, "bye"),
        ("three", None, "bye"),
    ]
    assert [(b.a, b.b) for b in draw.record.drawn[1].boards] == [("one", "four"), ("two", "three")]
    assert [(b.a, b.b) for b in draw.record.drawn[2].boards] == [("one", "two")]
    assert draw.record.champion == "one"
    assert len(games) == 2 * 4  # four matches played: n - 1


def test_a_resumed_knockout_draws_the_same_bracket() -> None:
    names = [f"s{i}" for i in range(1, 7)]
    rounds = Rounds(ko_config(names, extra_pairs=1), opening_source=lambda i: f"o{i}")
    seed = {n: i + 1 for i, n in enumerate(names)}
    games, draw = play(rounds, stronger(seed, {frozenset(("s3", "s6"))}))
    for cut in range(len(games) + 1):
        resumed = Rounds(ko_config(names, extra_pairs=1), opening_source=lambda i: f"o{i}")
        partial = resumed.draw(games[:cut]).record.drawn
        for mine, full in zip(partial, draw.record.drawn, strict=True):
            for b, f in zip(mine.boards, full.boards, strict=True):
                if b.winner is not None:
                    assert b == f
                if b.a is not None and b.b is not None:
                    assert (b.a, b.b) == (f.a, f.b)


def test_a_disqualified_entrant_loses_by_walkover() -> None:
    names = ["a", "b", "c", "d"]
    config = ko_config(names, faults={"restart": False})
    rounds = Rounds(config, opening_source=lambda i: f"o{i}")
    draw = rounds.draw([])
    games = []
    for t in draw.tasks:
        for n in (1, 2):
            p0, p1 = t.players(n)
            faulty = 0 if p0 == "a" else 1 if p1 == "a" else None
            score = {0: 0.0, 1: 1.0, None: 1.0 if p0 < p1 else 0.0}[faulty]
            games.append(StoredGame(t.game_key(n), p0, p1, score, faulty))
    draw = rounds.draw(games)
    assert draw.record.drawn[0].boards[0].winner == "d"  # a faulted, d goes through
    final = rounds.draw(games)
    final_board = final.record.drawn[1].boards[0]
    assert (final_board.a, final_board.b) == ("d", "b")
    assert "a" in final.record.withdrawn


def _file(tmp_path: Path, extra: str) -> Path:
    toml = tmp_path / "k.toml"
    toml.write_text(
        'name = "k"\nformat = "knockout"\nvariant = "single"\n'
        + extra
        + "".join(f'[[bots]]\nname = "{n}"\ncommand = "builtin:random"\n' for n in "abcd")
    )
    return toml


def test_seeds_from_the_file_the_rating_list_or_the_draw(tmp_path: Path) -> None:
    path = _file(tmp_path, 'seeds = ["c", "a", "d", "b"]\n')
    assert parse_config(path.read_bytes(), path).seeds == ["c", "a", "d", "b"]
    ratings = tmp_path / "list.json"
    ratings.write_text(
        json.dumps(
            {
                "lists": [
                    {
                        "game": "kamisado",
                        "variant": "single",
                        "players": [{"player": "d", "elo": 120}, {"player": "b", "elo": 50.5}],
                    }
                ]
            }
        )
    )
    path = _file(tmp_path, 'seed_from = "ratings"\nratings = "list.json"\n')
    assert parse_config(path.read_bytes(), path).seeds == ["d", "b", "a", "c"]
    path = _file(tmp_path, "seed = 5\n")
    drawn = parse_config(path.read_bytes(), path).seeds
    assert sorted(drawn) == ["a", "b", "c", "d"]
    assert parse_config(path.read_bytes(), path).seeds == drawn


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        ('seeds = ["a", "b"]\n', ["seeds:", "missing c, d"]),
        ('seeds = ["a", "b", "c", "d", "a"]\n', ["listed twice a"]),
        ('seed_from = "ratings"\n', ["ratings:", "needs ratings"]),
        ('seed_from = "ratings"\nratings = "none.json"\n', ["cannot read rating list"]),
        ("rounds = 3\n", ["rounds:", "leave rounds out"]),
        ('seed_from = "best"\n', ["seed_from", "'ratings'"]),
    ],
)
def test_bad_knockout_files_are_one_line(tmp_path: Path, extra: str, words: list[str]) -> None:
    path = _file(tmp_path, extra)
    with pytest.raises(ConfigError) as info:
        parse_config(path.read_bytes(), path)
    message = str(info.value)
    assert "\n" not in message
    for word in words:
        assert word in message


def test_changed_seeds_change_what_a_resume_checks() -> None:
    """The seeds are part of the fingerprint the store keeps: a rating list that
    changed between two runs makes the resume refuse rather than redraw."""
    one = Rounds(ko_config(["a", "b", "c"]), opening_source=lambda i: "o")
    two = Rounds(ko_config(["b", "a", "c"]), opening_source=lambda i: "o")
    assert one.fingerprint() != two.fingerprint()
    assert (
        one.fingerprint()
        == Rounds(ko_config(["a", "b", "c"]), opening_source=lambda i: "o").fingerprint()
    )
