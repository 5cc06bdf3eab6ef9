"""Every Kamisado rule, each on a hand-built position with the exact expected answer."""

from __future__ import annotations

import pytest
from kamisado_helpers import position_text, state

from arena.games import GameError, IllegalAction, get_game
from arena.games.kamisado import GAME, Position, perft
from arena.games.kamisado.board import COLOURS

# --------------------------------------------------------------------------- perft


@pytest.mark.parametrize(
    ("depth", "expected"), [(1, 102), (2, 1150), (3, 11182), (4, 105020), (5, 900982)]
)
def test_perft_from_start(depth: int, expected: int) -> None:
    assert perft(Position.start(), depth) == expected


def test_perft_counts_zero_length_plies_and_stops_at_round_end() -> None:
    # Depth 1 from a position whose only action is a zero-length move.
    s = state({"c7": "B"}, required="b")
    assert s.legal_actions() == ["c7-c7"]
    assert perft(s.pos, 1) == 1
    # A position after the round ended counts nothing.
    s = GAME.new_state("standard")
    for action in ("c1-a3", "b8-h2", "a3-e7"):
        s.apply_action(action)
    assert perft(s.pos, 1) == 0


def test_registry_finds_kamisado() -> None:
    assert get_game("kamisado") is GAME
    with pytest.raises(GameError, match="unknown game"):
        get_game("chess")


# --------------------------------------------------------------------------- moves


def test_start_position_first_move_any_tower() -> None:
    s = GAME.new_state("single")
    assert s.to_text() == "obvpyrgn/8/8/8/8/8/8/NGRYPVBO b - single 0-0 1 -"
    assert len(s.legal_actions()) == 102
    assert "a1-a7" in s.legal_actions()
    assert "a1-a8" not in s.legal_actions()  # occupied by Gold's orange


def test_slip_between_corner_touching_towers() -> None:
    # e4 and d5 touch at a corner; Black's green on d4 slips between them to e5.
    # Gold's brown on g8 (a green square) is where Gold's last move ended.
    s = state({"d4": "G", "e4": "y", "d5": "r", "g8": "n"}, required="g", kind="single")
    # Aligned by hand: a table reads better in rows.
    # fmt: off
    assert set(s.legal_actions()) == {
        "d4-e5", "d4-f6", "d4-g7", "d4-h8", "d4-c5", "d4-b6", "d4-a7",
    }
    # fmt: on


@pytest.mark.parametrize(
    ("token", "expected"),
    [
        # Plain: no limit. d1 straight to d7 (d8 is Gold's), c2 b3 a4, e2 f3 g4 h5.
        ("G", "d2 d3 d4 d5 d6 d7 c2 b3 a4 e2 f3 g4 h5"),
        # Sumo: at most 5 squares.
        ("G+", "d2 d3 d4 d5 d6 c2 b3 a4 e2 f3 g4 h5"),
        # Double: at most 3.
        ("G++", "d2 d3 d4 c2 b3 a4 e2 f3 g4"),
        # Triple: at most 1.
        ("G+++", "d2 c2 e2"),
    ],
)
def test_distance_limit_by_rank(token: str, expected: str) -> None:
    # Black's orange on a3 has moved this round (else the choice would be free).
    s = state({"d1": token, "c1": "R", "e1": "Y", "a3": "O"}, required="g", kind="marathon")
    assert set(s.legal_actions()) == {f"d1-{sq}" for sq in expected.split()}


def test_gold_moves_down_the_board() -> None:
    s = state({"e5": "p", "e3": "R"}, side="g", required="p", kind="single")
    # Aligned by hand: a table reads better in rows.
    # fmt: off
    assert set(s.legal_actions()) == {
        "e5-e4",
        "e5-d4", "e5-c3", "e5-b2",
        "e5-f4", "e5-g3", "e5-h2",
    }
    # fmt: on


def test_backwards_and_sideways_never_legal() -> None:
    s = state({"d4": "G"}, required="g", kind="single")
    targets = {a.split("-")[1] for a in s.legal_actions()}
    assert not targets & {"d3", "c4", "e4", "c3", "e3", "d4"}


def test_illegal_and_malformed_actions() -> None:
    s = GAME.new_state("single")
    with pytest.raises(IllegalAction, match="illegal action 'a1-b1'"):
        s.apply_action("a1-b1")
    with pytest.raises(GameError, match="not a Kamisado action"):
        s.apply_action("a1 to a3")


# --------------------------------------------------------------------------- zero-length moves


def test_zero_length_move_passes_on_its_square_colour() -> None:
    # Black's blue on c7 is blocked by b8, c8, d8; c7 is a pink square.
    s = state({"c7": "B"}, required="b", kind="single")
    assert s.legal_actions() == ["c7-c7"]
    s.apply_action("c7-c7")
    assert s.current_player() == 1
    assert s.to_text().split()[2] == "p"  # Gold must move pink
    gold_pink = s.pos.square_of[8 + COLOURS.index("pink")]
    assert {a.split("-")[0] for a in s.legal_actions()} == {
        f"{'abcdefgh'[gold_pink & 7]}{(gold_pink >> 3) + 1}"
    }


# --------------------------------------------------------------------------- deadlock


def test_deadlock_worked_example() -> None:
    s = GAME.new_state("standard")
    s.apply_action("c1-a3")
    s.apply_action("b8-h2")
    s.apply_action("a3-e7")
    assert s.to_text() == "o1vpyrgn/4R3/8/8/8/8/7b+/NG1YPVBO g - standard 0-1 1 g"
    assert s.legal_actions() == ["left", "right"]
    assert s.current_player() == 1  # Gold won and chooses the regroup


def _blocked_chain(gold_on_h2: str) -> dict[str, str]:
    # Gold's tower on h2 (a red square) is blocked by g1 and h1; Black's red on e7
    # (a blue square) is blocked by d8, e8, f8. Black's green on d1 is to move.
    # Aligned by hand: a table reads better in rows.
    # fmt: off
    return {
        "h2": gold_on_h2, "g1": "O", "h1": "B", "e7": "R",
        "d8": "v", "e8": "p", "f8": "g", "d1": "G", "a8": "o",
    }
    # fmt: on


def test_chain_of_blocked_towers_that_does_not_deadlock() -> None:
    s = state(_blocked_chain("y"), required="g", kind="standard")
    s.apply_action("d1-c2")  # ends on yellow: Gold must move its yellow on h2
    assert s.legal_actions() == ["h2-h2"]  # Gold's yellow is blocked
    s.apply_action("h2-h2")
    assert s.legal_actions() == ["e7-e7"]  # h2 is red: Black's red is blocked too
    s.apply_action("e7-e7")
    # e7 is blue: Gold's blue can move, so the chain ends without a deadlock.
    assert s.current_player() == 1
    assert s.to_text().split()[2] == "b"
    assert len(s.legal_actions()) > 1
    assert s.outcome() is None


def test_deadlock_loser_is_the_player_who_caused_it() -> None:
    s = state(_blocked_chain("b"), required="g", kind="standard")
    # d1-d2 ends on blue: Gold's blue is blocked on red, Black's red blocked on
    # blue, Gold's blue again: the chain repeats, and Black, who caused it, loses.
    s.apply_action("d1-d2")
    assert s.legal_actions() == ["left", "right"]
    assert s.current_player() == 1  # Gold won the round
    # Black's last move ended on d2, a blue square: Gold's blue is promoted.
    assert s.pos.rank[8 + COLOURS.index("blue")] == 1
    assert (s.pos.score(0), s.pos.score(1)) == (0, 1)
    assert s.pos.last_reason == "deadlock"


def test_deadlocked_position_text_is_rejected() -> None:
    text = position_text(_blocked_chain("b"), side="g", required="b")
    with pytest.raises(GameError, match="deadlock"):
        GAME.state_from_text(text)


# --------------------------------------------------------------------------- pushes


def test_double_sumo_push_worked_example() -> None:
    s = state({"d6": "g++", "d5": "Y", "d4": "R+"}, side="g", required="g", kind="long")
    # Aligned by hand: a table reads better in rows.
    # fmt: off
    assert set(s.legal_actions()) == {
        "d6-c5", "d6-b4", "d6-a3", "d6-e5", "d6-f4", "d6-g3", "d6-d5",
    }
    # fmt: on
    s.apply_action("d6-d5")
    board = dict(_towers(s))
    assert board["d5"] == "g++"
    assert board["d4"] == "Y"
    assert board["d3"] == "R+"
    # d3 is purple: Black's turn is skipped, Gold moves again with its purple tower.
    assert s.current_player() == 1
    assert s.to_text().split()[2] == "v"


def _towers(s) -> list[tuple[str, str]]:
    from arena.games.kamisado.notation import tower_token

    pos = s.pos
    return [
        (
            f"{'abcdefgh'[pos.square_of[t] & 7]}{(pos.square_of[t] >> 3) + 1}",
            tower_token(t, pos.rank[t]),
        )
        for t in range(16)
    ]


def test_sumo_push_and_follow_up_turn() -> None:
    s = state({"d4": "G+", "d5": "y"}, required="g")
    assert "d4-d5" in s.legal_actions()
    s.apply_action("d4-d5")
    board = dict(_towers(s))
    assert (board["d5"], board["d6"]) == ("G+", "y")
    # d6 is red: Black moves again with its red tower.
    assert s.current_player() == 0
    assert s.to_text().split()[2] == "r"


def test_no_diagonal_push() -> None:
    s = state({"d4": "G+", "e5": "y"}, required="g", kind="long")
    assert "d4-e5" not in s.legal_actions()
    assert "d4-f6" not in s.legal_actions()


@pytest.mark.parametrize(
    ("towers", "why"),
    [
        ({"d4": "G+", "d5": "y", "d6": "R"}, "own tower in the line"),
        ({"d4": "G+", "d5": "y", "d6": "r"}, "two towers for a Sumo"),
        ({"d4": "G+", "d5": "y+"}, "equal rank"),
        ({"d4": "G++", "d5": "y+", "d6": "r++"}, "a Double cannot push a Double"),
        ({"d4": "G++", "d5": "y", "d6": "r", "d7": "p"}, "three towers for a Double"),
        ({"d7": "G+", "d8": "y"}, "board edge: nothing is pushed off"),
    ],
)
def test_impossible_pushes(towers: dict[str, str], why: str) -> None:
    square = next(sq for sq, tok in towers.items() if tok[0] == "G")
    ahead = f"{square[0]}{int(square[1]) + 1}"
    s = state({**towers, "g8": "n"}, required="g", kind="long")  # n on green: Gold's last move
    assert f"{square}-{ahead}" not in s.legal_actions(), why


def test_double_pushes_two_and_triple_pushes_three() -> None:
    s = state({"d3": "G++", "d4": "y", "d5": "r+", "g8": "n"}, required="g", kind="long")
    assert "d3-d4" in s.legal_actions()
    towers = {"d2": "G+++", "d3": "y", "d4": "r+", "d5": "p++", "g8": "n"}
    s = state(towers, required="g", kind="marathon")
    assert "d2-d3" in s.legal_actions()
    s.apply_action("d2-d3")
    board = dict(_towers(s))
    assert (board["d3"], board["d4"], board["d5"], board["d6"]) == ("G+++", "y", "r+", "p++")


def test_push_as_the_only_legal_action() -> None:
    # Black's green Sumo on h3: g4 and the straight h4 are taken, h4 can be pushed.
    s = state({"h3": "G+", "g4": "R", "h4": "y"}, required="g")
    assert s.legal_actions() == ["h3-h4"]


def test_follow_up_tower_blocked_makes_zero_length_move() -> None:
    # After d4-d5 pushes Gold's yellow to d6 (red), Black must move its red on h7,
    # blocked by g8 and h8: a zero-length move, then Gold moves h7's colour (purple).
    s = state({"d4": "G+", "d5": "y", "h7": "R", "g8": "o", "h8": "n"}, required="g")
    s.apply_action("d4-d5")
    assert s.current_player() == 0
    assert s.legal_actions() == ["h7-h7"]
    s.apply_action("h7-h7")
    assert s.current_player() == 1
    assert s.to_text().split()[2] == "v"


def test_gold_pushes_downwards() -> None:
    s = state({"e5": "p+", "e4": "R"}, side="g", required="p")
    assert "e5-e4" in s.legal_actions()
    s.apply_action("e5-e4")
    board = dict(_towers(s))
    assert (board["e4"], board["e3"]) == ("p+", "R")


# --------------------------------------------------------------------------- scoring and matches


# Black's purple on c7 can only step diagonally to d8: Gold's pink stands on d6.
# Aligned by hand: a table reads better in rows.
# fmt: off
_HOME_ROW_STEP = {
    "c7": "V", "d6": "p",
    "a8": "o", "b8": "b", "c8": "v", "e8": "y", "f8": "r", "g8": "g", "h8": "n",
}
# fmt: on


def test_home_row_win_promotes_and_scores() -> None:
    s = state(_HOME_ROW_STEP, required="v")
    assert "c7-d8" in s.legal_actions()
    s.apply_action("c7-d8")
    assert s.pos.rank[COLOURS.index("purple")] == 1
    assert (s.pos.score(0), s.pos.score(1)) == (1, 0)
    assert s.pos.last_reason == "home-row"
    assert s.legal_actions() == ["left", "right"]
    assert s.current_player() == 0  # the winner chooses the regroup


@pytest.mark.parametrize(
    ("kind", "ranks", "over"),
    [
        ("single", {}, True),
        ("standard", {"O": 1, "B": 1}, True),  # 2 + 1 = 3
        ("standard", {"O": 1}, False),  # 1 + 1 = 2 < 3
        ("long", {"O": 2, "B": 2}, True),  # 6 + 1 = 7
        ("long", {"O": 2, "B": 1, "N": 1}, False),  # 5 + 1 = 6 < 7
        ("marathon", {"O": 3, "B": 3}, True),  # 14 + 1 = 15
        ("marathon", {"O": 3, "B": 2, "N": 2}, False),  # 13 + 1 = 14 < 15
    ],
)
def test_match_ends_at_its_target(kind: str, ranks: dict[str, int], over: bool) -> None:
    towers = dict(_HOME_ROW_STEP)
    for square, letter in zip(("a2", "b2", "h2"), ranks, strict=False):
        towers[square] = letter + "+" * ranks[letter]
    s = state(towers, required="v", kind=kind)
    s.apply_action(next(a for a in s.legal_actions() if a.endswith("8")))
    outcome = s.outcome()
    if over:
        assert s.is_terminal() and outcome is not None
        assert outcome.returns == (1.0, 0.0)
        assert outcome.reason == "home-row"
        assert s.legal_actions() == []
        assert s.to_text().endswith(" #")
    else:
        assert outcome is None
        assert s.legal_actions() == ["left", "right"]


def test_sumo_winning_again_becomes_double_and_ends_standard_match() -> None:
    s = state({**_HOME_ROW_STEP, "c7": "V+"}, required="v")
    s.apply_action(next(a for a in s.legal_actions() if a.endswith("8")))
    assert s.pos.rank[COLOURS.index("purple")] == 2
    assert s.pos.score(0) == 3
    assert s.is_terminal()


# --------------------------------------------------------------------------- regrouping


def test_regroup_worked_example_gold_left_and_right() -> None:
    for choice, expected in (
        ("left", "b+ovpyrgn/8/8/8/8/8/8/NGYPVBOR b - standard 0-1 2 -"),
        ("right", "ovpyrgnb+/8/8/8/8/8/8/RNGYPVBO b - standard 0-1 2 -"),
    ):
        s = GAME.new_state("standard")
        for action in ("c1-a3", "b8-h2", "a3-e7", choice):
            s.apply_action(action)
        assert s.to_text() == expected


@pytest.mark.parametrize(
    ("choice", "expected"),
    [
        ("left", "bovpyrgn/8/8/8/8/8/8/NYPVBRGO+ g - standard 1-0 2 -"),
        ("right", "ovpyrgnb/8/8/8/8/8/8/O+GNYPVBR g - standard 1-0 2 -"),
    ],
)
def test_regroup_black_chooses(choice: str, expected: str) -> None:
    s = GAME.state_from_text("oO+vpyrgn/8/8/1b6/8/8/2G5/N2YPVBR b - standard 1-0 1 b")
    assert s.legal_actions() == ["left", "right"]
    s.apply_action(choice)
    assert s.to_text() == expected
    assert s.current_player() == 1  # Gold lost the round and starts, with any tower
    assert len({a.split("-")[0] for a in s.legal_actions()}) == 8


# --------------------------------------------------------------------------- position text


def test_position_text_errors_name_the_field() -> None:
    good = "obvpyrgn/8/8/8/8/8/8/NGRYPVBO b - standard 0-0 1 -"
    cases = {
        good.replace(" b - ", " x - "): "side to move",
        good.replace("standard", "blitz"): "match kind",
        good.replace("0-0", "1-0"): "scores",
        good.replace("NGRYPVBO", "NGRYPVB1"): "missing",
        good.replace("NGRYPVBO", "NGRYPVBOO"): "twice",
        good.replace("/8/8/8/8/8/8/", "/8/8/8/8/8/"): "8 ranks",
        good.replace(" 1 -", " 0 -"): "round",
        "obvpyrgn/8/8/8/8/8/8/NGRYPVB++O b - single 3-0 1 #": "rank",
        "obvpyrgn/8/8/8/8/8/8/NGRYPVB+O b - single 1-0 1 -": "target",
        "obvpyrgn/8/8/8/8/8/8/NGRYPVBO b - standard 0-0 1 g": "pending",
        "obvpyrgn/8/8/8/8/8/2R5/NG1YPVBO b x standard 0-0 1 -": "required colour",
        good + " extra": "7 fields",
    }
    for text, words in cases.items():
        with pytest.raises(GameError, match=words):
            GAME.state_from_text(text)


def test_make_unmake_restores_position() -> None:
    pos = Position.start(3)
    before = pos.key()
    for move in pos.legal_moves():
        pos.make(move)
        for reply in pos.legal_moves():
            pos.make(reply)
            pos.unmake()
        pos.unmake()
        assert pos.key() == before


def test_deadlock_caused_by_a_push_loses_for_the_pusher() -> None:
    # Black pushes d4-d5 (Gold's yellow to d6, a red square): Black's follow-up
    # tower, red on h7, is blocked by g8 and h8 and stands on purple; Gold's purple
    # on h2 is blocked by g1 and h1 and stands on red: the chain repeats.
    s = state(
        {"d4": "G+", "d5": "y", "h7": "R", "g8": "o", "h8": "n", "h2": "v", "g1": "O", "h1": "B"},
        required="g",
    )
    s.apply_action("d4-d5")
    assert s.legal_actions() == ["left", "right"]
    assert s.current_player() == 1 and s.pos.last_reason == "deadlock"
    # The pusher's move ended on d5, an orange square: Gold's orange is promoted.
    assert s.pos.rank[8 + COLOURS.index("orange")] == 1
    assert (s.pos.score(0), s.pos.score(1)) == (1, 1)  # Black's Sumo already counted 1
