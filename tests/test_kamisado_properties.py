"""Property tests: random play from random reachable positions keeps the rules' invariants."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from arena.games.kamisado import GAME, Position
from arena.games.kamisado.board import MATCH_KINDS, MATCH_MAX_RANK
from arena.games.kamisado.position import OVER

# A marathon of random play is long but finite in practice; this cap only turns
# a hang into a failure.
PLY_CAP = 20_000


def check_invariants(pos: Position) -> None:
    seen = set()
    for tower in range(16):
        square = pos.square_of[tower]
        assert pos.at[square] == tower
        assert square not in seen
        seen.add(square)
    assert sum(t >= 0 for t in pos.at) == 16
    limit = MATCH_MAX_RANK[pos.kind] + (1 if pos.phase == OVER else 0)
    assert all(0 <= r <= limit for r in pos.rank)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), kind=st.sampled_from(MATCH_KINDS))
def test_random_matches_keep_invariants_and_end(seed: int, kind: str) -> None:
    rng = random.Random(seed)
    state = GAME.new_state(kind)
    plies = 0
    while not state.is_terminal():
        actions = state.legal_actions()
        assert actions
        assert len(set(actions)) == len(actions)
        state.apply_action(rng.choice(actions))
        check_invariants(state.pos)
        plies += 1
        assert plies < PLY_CAP
    outcome = state.outcome()
    assert outcome is not None
    assert sorted(outcome.returns) == [0.0, 1.0]
    assert state.legal_actions() == []
    winner = outcome.returns.index(1.0)
    assert state.pos.score(winner) >= state.pos.target > state.pos.score(1 - winner)


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), kind=st.sampled_from(MATCH_KINDS), plies=st.integers(0, 80))
def test_position_text_round_trips_and_unmake_restores(seed: int, kind: str, plies: int) -> None:
    rng = random.Random(seed)
    state = GAME.new_state(kind)
    for _ in range(plies):
        if state.is_terminal():
            break
        state.apply_action(rng.choice(state.legal_actions()))
    text = state.to_text()
    again = GAME.state_from_text(text)
    assert again.to_text() == text
    assert again.pos.key() == state.pos.key()
    assert again.legal_actions() == state.legal_actions()
    # Every action made and taken back leaves the position exactly as it was.
    pos = state.pos
    before = pos.key()
    for move in pos.legal_moves():
        pos.make(move)
        check_invariants(pos)
        pos.unmake()
        assert pos.key() == before


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), kind=st.sampled_from(MATCH_KINDS))
def test_every_reached_position_parses(seed: int, kind: str) -> None:
    rng = random.Random(seed)
    state = GAME.new_state(kind)
    while not state.is_terminal():
        state.apply_action(rng.choice(state.legal_actions()))
        assert GAME.state_from_text(state.to_text()).to_text() == state.to_text()
