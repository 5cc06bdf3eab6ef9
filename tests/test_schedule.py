"""The schedule: exact pairings, colour balance, round-robin order, determinism."""

from __future__ import annotations

from collections import Counter
from itertools import combinations
from pathlib import Path

import msgspec
import pytest
from fake_game import FakeGame
from hypothesis import given, settings
from hypothesis import strategies as st

from arena.plan.config import BotConfig, Openings, TournamentConfig, read_openings_file
from arena.plan.schedule import (
    PairTask,
    build_schedule,
    draw_openings,
    pairings,
    schedule_fingerprint,
)

GAME = FakeGame()


def make_config(
    n: int = 4,
    *,
    fmt: str = "round-robin",
    challengers: tuple[str, ...] = (),
    gpp: int = 2,
    seed: int = 7,
    openings: Openings | None = None,
) -> TournamentConfig:
    return TournamentConfig(
        name="t",
        bots=[BotConfig(name=f"bot{i}", command=["true"]) for i in range(n)],
        game="fake",
        variant="standard",
        format=fmt,  # type: ignore[arg-type]
        challengers=list(challengers),
        games_per_pairing=gpp,
        seed=seed,
        openings=openings or Openings(plies=4),
    )


def games(tasks: list[PairTask]) -> list[tuple[str, str, str, str]]:
    """(game key, player 0, player 1, opening) of every game."""
    result = []
    for t in tasks:
        for n in (1, 2):
            p0, p1 = t.players(n)
            result.append((t.game_key(n), p0, p1, t.opening))
    return result


def assert_colour_balance(tasks: list[PairTask], per_pairing: int) -> None:
    """Each bot is player 0 exactly as often as player 1 against each opponent,
    and the two games of a pair share an opening with sides swapped."""
    first = Counter((p0, p1) for _, p0, p1, _ in games(tasks))
    for (x, y), n in first.items():
        assert n == first[(y, x)] == per_pairing // 2
    for t in tasks:
        assert t.players(1) == (t.a, t.b) and t.players(2) == (t.b, t.a)


def test_round_robin_pairings_and_balance() -> None:
    config = make_config(4, gpp=6)
    tasks = build_schedule(config, game=GAME)
    assert len(tasks) == 6 * 3  # 6 pairings x 3 pair tasks
    pairs = Counter(frozenset((t.a, t.b)) for t in tasks)
    assert pairs == {frozenset(p): 3 for p in combinations([f"bot{i}" for i in range(4)], 2)}
    assert_colour_balance(tasks, 6)
    assert [t.index for t in tasks] == list(range(len(tasks)))
    assert all(t.game == "fake" and t.variant == "standard" for t in tasks)


def test_gauntlet_pairings_and_balance() -> None:
    config = make_config(5, fmt="gauntlet", challengers=("bot3", "bot1"), gpp=4)
    tasks = build_schedule(config, game=GAME)
    expected = {(c, o) for c in ("bot3", "bot1") for o in ("bot0", "bot2", "bot4")}
    assert Counter((t.a, t.b) for t in tasks) == dict.fromkeys(expected, 2)
    assert_colour_balance(tasks, 4)


def test_first_round_covers_every_pairing_and_spreads_bots() -> None:
    config = make_config(6, gpp=4)
    tasks = build_schedule(config, game=GAME)
    one_round = pairings(config)
    assert len(one_round) == 15
    first = tasks[: len(one_round)]
    assert {frozenset((t.a, t.b)) for t in first} == {frozenset(p) for p in one_round}
    assert all(t.round == 1 for t in first) and all(t.round == 2 for t in tasks[15:])
    # Circle method: each block of n/2 consecutive tasks involves every bot once.
    for start in range(0, 15, 3):
        block = tasks[start : start + 3]
        assert len({name for t in block for name in (t.a, t.b)}) == 6


@settings(max_examples=40, deadline=None)
@given(n=st.integers(2, 9), rounds=st.integers(1, 3), gauntlet=st.booleans(), data=st.data())
def test_balance_for_any_size(n: int, rounds: int, gauntlet: bool, data: st.DataObject) -> None:
    names = [f"bot{i}" for i in range(n)]
    if gauntlet and n >= 2:
        k = data.draw(st.integers(1, n - 1))
        challengers = tuple(data.draw(st.permutations(names))[:k])
        config = make_config(n, fmt="gauntlet", challengers=challengers, gpp=2 * rounds)
        expected = {frozenset((c, o)) for c in challengers for o in names if o not in challengers}
    else:
        config = make_config(n, gpp=2 * rounds)
        expected = {frozenset(p) for p in combinations(names, 2)}
    tasks = build_schedule(config, game=GAME)
    assert Counter(frozenset((t.a, t.b)) for t in tasks) == dict.fromkeys(expected, rounds)
    assert_colour_balance(tasks, 2 * rounds)
    keys = [k for t in tasks for k in t.game_keys]
    assert len(set(keys)) == len(keys) == 2 * len(tasks)


def test_keys_are_stable_and_readable() -> None:
    tasks = build_schedule(make_config(3, gpp=4), game=GAME)
    assert tasks[0].key == "r1:bot1:bot2"  # bot0 has the bye first
    assert tasks[0].game_keys == ("r1:bot1:bot2/1", "r1:bot1:bot2/2")
    assert len({t.key for t in tasks}) == len(tasks)
    with pytest.raises(ValueError):
        tasks[0].game_key(3)


def test_deterministic_for_a_seed() -> None:
    one = build_schedule(make_config(seed=11), game=GAME)
    two = build_schedule(make_config(seed=11), game=GAME)
    assert one == two
    # A pair task is a plain value: it survives a JSON round trip unchanged.
    wire = msgspec.json.encode(one)
    assert msgspec.json.decode(wire, type=list[PairTask]) == one


def test_different_seeds_give_different_openings() -> None:
    one = [t.opening for t in build_schedule(make_config(seed=1, gpp=4), game=GAME)]
    two = [t.opening for t in build_schedule(make_config(seed=2, gpp=4), game=GAME)]
    assert one != two
    assert all(GAME.state_from_text(o).actions.__len__() == 4 for o in one)
    assert len(set(one)) > 1  # different pair tasks get different openings


def test_no_openings_means_start_position() -> None:
    tasks = build_schedule(make_config(openings=Openings()), game=GAME)
    assert {t.opening for t in tasks} == {"fake:standard:"}


def test_openings_file_used_in_order_and_cycled(tmp_path: Path) -> None:
    path = tmp_path / "openings.txt"
    path.write_text("fake:standard:a\n# skipped\n\nfake:standard:b\nfake:standard:c\n")
    openings = Openings(file=str(path), positions=read_openings_file(path))
    config = make_config(3, gpp=4, openings=openings)
    tasks = build_schedule(config, game=GAME)
    assert [t.opening[-1] for t in tasks] == list("abcabc")
    assert draw_openings(config, 4, GAME) == [f"fake:standard:{c}" for c in "abca"]


def test_opening_source_overrides() -> None:
    tasks = build_schedule(make_config(3), game=GAME, opening_source=lambda i: f"pos{i}")
    assert [t.opening for t in tasks] == ["pos0", "pos1", "pos2"]


def test_fingerprint_follows_what_matters() -> None:
    def fp(config: TournamentConfig) -> str:
        return schedule_fingerprint(config, build_schedule(config, game=GAME))

    base = make_config()
    assert fp(base) == fp(make_config())
    assert fp(base) != fp(make_config(seed=8))
    assert fp(base) != fp(msgspec.structs.replace(base, tc="5+0"))
    assert fp(base) != fp(msgspec.structs.replace(base, max_plies=3))
    assert fp(base) == fp(msgspec.structs.replace(base, concurrency=base.concurrency + 5))
    moved = [msgspec.structs.replace(b, command=["/elsewhere/bot"]) for b in base.bots]
    assert fp(base) == fp(msgspec.structs.replace(base, bots=moved))


def test_real_kamisado_game() -> None:
    from arena.games import get_game

    game = get_game("kamisado")
    config = msgspec.structs.replace(
        make_config(4, gpp=4), game="kamisado", variant=game.default_variant
    )
    tasks = build_schedule(config)
    assert tasks == build_schedule(config)
    assert len(tasks) == 12
    for t in tasks:
        assert t.game == "kamisado" and t.variant == game.default_variant
        state = game.state_from_text(t.opening)
        assert not state.is_terminal()
    assert_colour_balance(tasks, 4)
