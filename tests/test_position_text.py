"""Strict position texts: the canonical form only, every field checked against the others.

One regression test per loose parse the robustness issue found, then hypothesis
fuzzing of both games' parsers: nothing but a ``GameError`` ever comes out, every
accepted text prints back byte for byte, and (Kamisado) no accepted position runs
into an endless chain of forced zero-length moves.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.games import GameError
from arena.games.kamisado import GAME as KAMISADO
from arena.games.kamisado.board import COLOUR_LETTERS, MATCH_KINDS
from arena.games.kamisado.notation import position_to_text
from arena.games.kamisado.position import PLAY
from arena.games.sekigahara import GAME as SEKIGAHARA

START = "obvpyrgn/8/8/8/8/8/8/NGRYPVBO b - standard 0-0 1 -"
AFTER_C1_A3 = "obvpyrgn/8/8/8/8/R7/8/NG1YPVBO g b standard 0-0 1 -"
REGROUP = "oO+vpyrgn/8/8/1b6/8/8/2G5/N2YPVBR b - standard 1-0 1 b"


def rejected(text: str, field: str) -> None:
    with pytest.raises(GameError) as info:
        KAMISADO.state_from_text(text)
    assert field in str(info.value), str(info.value)


# --------------------------------------------------------------------- Kamisado regressions


def test_free_choice_in_mid_round_is_rejected() -> None:
    # Every tower blocked and a free choice: the old parser accepted it, and the
    # referee then played forced zero-length moves until the ply cap.
    rejected("obvpyrgn/OBVPYRGN/8/8/8/8/8/8 b - single 0-0 1 -", "required colour")
    rejected(AFTER_C1_A3.replace(" g b ", " g - "), "required colour")


def test_named_colour_before_any_move_is_rejected() -> None:
    rejected(START.replace(" b - ", " b o "), "required colour")


def test_required_colour_must_lie_under_an_opponent_tower() -> None:
    # After c1-a3 Gold must move blue (a3 is blue); no Black tower stands on red
    # (c1, the only red square of Black's home row, is empty).
    rejected(AFTER_C1_A3.replace(" g b ", " g r "), "required colour 'r'")


def test_round_one_must_start_from_the_start_position_with_black() -> None:
    rejected(START.replace("NGRYPVBO", "GNRYPVBO"), "board")
    rejected(START.replace(" b - ", " g - "), "side to move")


def test_pending_regroup_in_a_single_round_match_is_rejected() -> None:
    rejected(START.replace("standard", "single").replace(" 1 -", " 1 b"), "pending")


def test_pending_regroup_without_a_promotion_is_rejected() -> None:
    rejected(START.replace(" 1 -", " 1 b"), "pending")
    rejected(REGROUP.replace("oO+", "oO").replace("1-0", "0-0"), "pending")


def test_round_number_must_match_the_promotions() -> None:
    rejected(REGROUP.replace(" 1 b", " 3 b"), "round")
    rejected("b+ovpyrgn/8/8/8/8/8/8/NGYPVBOR b - standard 0-1 5 -", "round")
    rejected("b+ovpyrgn/8/8/8/8/8/8/NGYPVBOR b - standard 0-1 1 -", "round")
    KAMISADO.state_from_text("b+ovpyrgn/8/8/8/8/8/8/NGYPVBOR b - standard 0-1 2 -")


def test_a_single_round_match_ends_with_its_first_promotion() -> None:
    """A score of 0-3 (three promoted towers, "round 3") cannot come from a single
    round: its first promotion ends the match."""
    over = "obvp3n/Y4y2/N7/7g/8/8/4V2O/1GR1P1Br+ b - single 0-1 1 #"
    KAMISADO.state_from_text(over)
    rejected(over.replace("obvp", "o+b+vp").replace("0-1 1", "0-3 3"), "round")
    rejected(over.replace("obvp", "o+bvp").replace("0-1 1", "0-2 2"), "round")


@pytest.mark.parametrize(
    "board",
    [
        "obvpyrgn/08/8/8/8/8/8/NGRYPVBO",  # a zero
        "obvpyrgn/44/8/8/8/8/8/NGRYPVBO",  # a run of digits
        "obvpyrgn/71/8/8/8/8/8/NGRYPVBO",
        "obvpyrgn/\u0668/8/8/8/8/8/NGRYPVBO",  # Arabic-Indic eight
        "obvpyrgn/\u00b2\u0666/8/8/8/8/8/NGRYPVBO",  # superscript two, Arabic-Indic six
        "obvpyrgn/8/8/8/8/8/8/NGRYPVBO+0",
    ],
)
def test_board_digits_are_single_ascii_runs(board: str) -> None:
    rejected(START.replace(START.split()[0], board), "board")


@pytest.mark.parametrize("round_text", ["\u0663", "\u00b2", "01", "+1", "1.0", "9" * 5000])
def test_round_is_plain_ascii_digits(round_text: str) -> None:
    rejected(START.replace(" 1 -", f" {round_text} -"), "round")


@pytest.mark.parametrize("scores", ["\u0660-\u0660", "00-0", "0-0 ", "+0-0"])
def test_scores_are_exactly_as_printed(scores: str) -> None:
    with pytest.raises(GameError):
        KAMISADO.state_from_text(START.replace("0-0", scores))


def test_upper_case_colour_letters_are_rejected() -> None:
    rejected(AFTER_C1_A3.replace(" g b ", " g B "), "required colour")
    rejected(START.replace(" b - ", " B - "), "side")
    rejected(START.replace("standard", "Standard"), "match kind")


@pytest.mark.parametrize(
    "text",
    [
        START.replace(" b ", "  b "),
        " " + START,
        START + " ",
        START + "\n",
        START.replace(" ", "\t"),
        START.replace(" standard ", "\u00a0standard "),
    ],
)
def test_spacing_is_exactly_single_spaces(text: str) -> None:
    with pytest.raises(GameError):
        KAMISADO.state_from_text(text)


def test_finished_match_shows_the_loser_to_move() -> None:
    KAMISADO.state_from_text("oO+vpyrgn/8/8/1b6/8/8/2G5/N2YPVBR g - single 1-0 1 #")
    rejected("oO+vpyrgn/8/8/1b6/8/8/2G5/N2YPVBR b - single 1-0 1 #", "side to move")


# --------------------------------------------------------------------- Kamisado fuzz


def reached(seed: int, kind: str, plies: int) -> str:
    """The position text after ``plies`` random actions of a ``kind`` match."""
    rng = random.Random(seed)
    state = KAMISADO.new_state(kind)
    for _ in range(plies):
        if state.is_terminal():
            break
        state.apply_action(rng.choice(state.legal_actions()))
    return state.to_text()


def check_accepted(text: str) -> None:
    """Parse ``text``; if accepted it must print back identical and its forced
    zero-length moves must end (a chain visits each of the 16 towers at most once)."""
    try:
        state = KAMISADO.state_from_text(text)
    except GameError:
        return
    assert state.to_text() == text
    zero_length = 0
    while not state.is_terminal() and len(legal := state.legal_actions()) == 1:
        frm, _, to = legal[0].partition("-")
        zero_length = zero_length + 1 if frm == to else 0
        assert zero_length <= 16, f"endless chain of zero-length moves from {text}"
        state.apply_action(legal[0])


POSITION_CHARS = "obvpyrgnOBVPYRGN+-#/ 012345678\u0663\u00b2bg"


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(POSITION_CHARS), max_size=70))
def test_kamisado_parser_fuzz_characters(text: str) -> None:
    check_accepted(text)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80))
def test_kamisado_parser_fuzz_any_text(text: str) -> None:
    check_accepted(text)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    kind=st.sampled_from(MATCH_KINDS),
    plies=st.integers(0, 60),
    moves=st.lists(st.tuples(st.integers(0, 15), st.integers(0, 63)), max_size=4),
    side=st.sampled_from("bg"),
    required=st.sampled_from("-" + COLOUR_LETTERS.lower()),
    field=st.integers(0, 6),
    value=st.sampled_from(["-", "b", "g", "#", "1", "2", "3", "0-0", "1-0", "0-1", "single"]),
)
def test_kamisado_parser_fuzz_plausible_positions(
    seed: int,
    kind: str,
    plies: int,
    moves: list[tuple[int, int]],
    side: str,
    required: str,
    field: int,
    value: str,
) -> None:
    """Positions near reachable ones: towers moved to other squares, another side or
    required colour, one field replaced; texts are printed canonically, so the
    parser's cross-field checks are what decides."""
    pos = KAMISADO.state_from_text(reached(seed, kind, plies)).pos
    for tower, square in moves:
        if pos.at[square] < 0:
            pos.at[pos.square_of[tower]] = -1
            pos.at[square] = tower
            pos.square_of[tower] = square
    if pos.phase == PLAY:
        pos.side = "bg".index(side)
        pos.required = "-obvpyrgn".index(required) - 1
    text = position_to_text(pos)
    check_accepted(text)
    fields = text.split(" ")
    fields[field] = value
    check_accepted(" ".join(fields))


# --------------------------------------------------------------------- Sekigahara

SEKI_START = (
    "sekigahara battle attacker=ishida ishida=b01:mori:2,b02:ukita:3/I24:mori:p,I48:ukita:p"
    " tokugawa=b11:date:2/T01:loyalty,T22:date:p moves="
)
SEKI_PLAYED = SEKI_START + "deploy I24 b01;challenge T01;decline"


def seki_rejected(text: str, field: str) -> None:
    with pytest.raises(GameError) as info:
        SEKIGAHARA.state_from_text(text)
    assert field in str(info.value), str(info.value)


def test_sekigahara_canonical_texts_are_read_back_identical() -> None:
    for text in (SEKI_START, SEKI_PLAYED):
        assert SEKIGAHARA.state_from_text(text).to_text() == text


@pytest.mark.parametrize(
    ("text", "field"),
    [
        (" " + SEKI_PLAYED, "fields"),
        (SEKI_PLAYED + "\n", "moves"),
        (SEKI_PLAYED + ";", "moves: move 4"),
        (SEKI_PLAYED.replace(";challenge", ";;challenge"), "moves: move 2"),
        (SEKI_PLAYED.replace("deploy I24", "deploy  I24"), "moves: move 1"),
        (SEKI_PLAYED.replace(" ishida=", "  ishida="), "5 fields"),
        (SEKI_PLAYED.replace("battle attacker", "battle\tattacker"), "5 fields"),
        (SEKI_START.replace("/T01:loyalty,T22:date:p", "/"), "tokugawa: not in canonical form"),
        (SEKI_START.replace("I24:mori:p", "I24\n:mori:p"), "ishida"),
        (SEKI_START.replace("b02:ukita:3", "b02:ukita:\u0663"), "ishida"),
        (SEKI_START.replace("sekigahara ", "Sekigahara ", 1), "game"),
        (SEKI_START.replace(" ishida=", " tokugawa=", 1), "ishida"),
        (SEKI_START.replace("battle", "Battle"), "scenario"),
    ],
)
def test_sekigahara_loose_texts_are_rejected_naming_the_field(text: str, field: str) -> None:
    seki_rejected(text, field)


def test_sekigahara_illegal_move_names_the_move() -> None:
    seki_rejected(SEKI_START + "deploy I48 b01", "moves: move 1")


def seki_reached(seed: int, variant: str, plies: int) -> str:
    rng = random.Random(seed)
    state = SEKIGAHARA.random_opening(variant, 0, rng)
    for _ in range(plies):
        if state.is_terminal():
            break
        state.apply_action(rng.choice(state.legal_actions()))
    return state.to_text()


def check_seki_accepted(text: str) -> None:
    try:
        state = SEKIGAHARA.state_from_text(text)
    except GameError:
        return
    assert state.to_text() == text


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=120))
def test_sekigahara_parser_fuzz_any_text(text: str) -> None:
    check_seki_accepted(text)
    check_seki_accepted(SEKI_START + text)


SEKI_CHARS = " ;,:/=-*\n\t\u0663abcdeglmoprsI0123456789"


@settings(max_examples=300, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    variant=st.sampled_from(["battle", "siege"]),
    plies=st.integers(0, 30),
    edits=st.lists(
        st.tuples(
            st.integers(0, 10**6),
            st.sampled_from(["insert", "delete", "replace"]),
            st.sampled_from(SEKI_CHARS),
        ),
        min_size=1,
        max_size=3,
    ),
)
def test_sekigahara_parser_fuzz_edited_positions(
    seed: int, variant: str, plies: int, edits: list[tuple[int, str, str]]
) -> None:
    text = seki_reached(seed, variant, plies)
    assert SEKIGAHARA.state_from_text(text).to_text() == text
    for at, how, char in edits:
        at %= len(text) + 1
        if how == "insert":
            text = text[:at] + char + text[at:]
        elif how == "delete":
            text = text[:at] + text[at + 1 :]
        else:
            text = text[:at] + char + text[at + 1 :]
    check_seki_accepted(text)
