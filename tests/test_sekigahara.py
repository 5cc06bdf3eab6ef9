"""Rules core of the Sekigahara battle: the worked example, one test per rule,
scenarios and notation, and property tests over seeded deals."""

from __future__ import annotations

import json
import random
import re
from importlib import resources

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from arena.games import GameError, IllegalAction, get_game
from arena.games.sekigahara import (
    GAME,
    Scenario,
    SekigaharaState,
    deal,
    default_scenario,
    load_toml,
    swap_roles,
)
from arena.games.sekigahara.cards import Block, Card, CardKind, Mark, deck, default_army
from arena.games.sekigahara.notation import parse_action

ATTACKER, DEFENDER = 0, 1


def scenario(
    ishida_blocks: str,
    ishida_hand: str,
    tokugawa_blocks: str,
    tokugawa_hand: str,
    attacker: str = "ishida",
    variant: str = "battle",
) -> Scenario:
    """A hand-built scenario from space-separated tokens (``-`` for none)."""

    def army(blocks: str, hand: str) -> str:
        return f"{','.join(blocks.split()) or '-'}/{','.join(hand.split()) or '-'}"

    return Scenario.from_text(
        f"{variant} attacker={attacker} ishida={army(ishida_blocks, ishida_hand)}"
        f" tokugawa={army(tokugawa_blocks, tokugawa_hand)}"
    )


def play(state: SekigaharaState, *actions: str) -> SekigaharaState:
    for action in actions:
        state.apply_action(action)
    return state


def impacts(state: SekigaharaState) -> tuple[int, int]:
    return state.sides[0].impact, state.sides[1].impact


# --- the worked example -----------------------------------------------------------

WORKED_EXAMPLE = [
    # (player, action, attacker impact, defender impact) after the action
    (ATTACKER, "leader x01", 1, 0),  # free leader [A-leader] 1
    (DEFENDER, "deploy T18 x11", 1, 3),  # sword 1 with [1-gun]: 1 + 2
    (ATTACKER, "pass", 1, 3),
    (ATTACKER, "leader x02", 2, 3),  # free leader [B-leader] 1
    (ATTACKER, "deploy I48 x03", 6, 3),  # card A with [AAA]: 3 + 1
    (DEFENDER, "pass", 6, 3),
    (DEFENDER, "deploy T19 x12", 6, 9),  # sword 1 with [1-gun]: (1 + 2) + 1 + 2
    (ATTACKER, "pass", 6, 9),
    (ATTACKER, "deploy I49 x04", 9, 9),  # card A with [A-gun]: 1 + 2, gun ignored
    (DEFENDER, "pass", 9, 9),
    (ATTACKER, "deploy I19 x05", 15, 9),  # tie: attacker again; sword B [B-gun]: 3 + 1 + 2
    (DEFENDER, "pass", 15, 9),
    (DEFENDER, "deploy T29 x13", 15, 16),  # sword 2 with [2-gun]: 3 + 0 + 4
    (ATTACKER, "pass", 15, 16),
    (ATTACKER, "deploy I18 x06,x07", 22, 16),  # double B: [B-gun] 1 + 2, [B-cav] 1 + 3
    (DEFENDER, "challenge T01", 22, 16),
    (ATTACKER, "decline", 15, 19),  # no B card left: both turn, Tokugawa + 1 + (1 + 1)
    (ATTACKER, "stop", 15, 19),
    (DEFENDER, "deploy T30 x14", 15, 25),  # sword 2 with [2-cav]: 3 + 1 + 2 (turned B-cav)
    (ATTACKER, "pass", 15, 25),  # a stopped side is still asked about challenges
    (DEFENDER, "stop", 15, 25),
]


def worked_example() -> SekigaharaState:
    text = resources.files("arena.games.sekigahara").joinpath("worked-example.toml").read_text()
    return GAME.state_from_scenario(load_toml(text))


def test_worked_example_step_by_step() -> None:
    state = worked_example()
    for player, action, attacker, defender in WORKED_EXAMPLE:
        assert state.current_player() == player, action
        assert action in state.legal_actions()
        state.apply_action(action)
        assert impacts(state) == (attacker, defender), action
    assert state.is_terminal()
    assert state.legal_actions() == []
    outcome = state.outcome()
    assert outcome is not None
    assert outcome.returns == (0.0, 1.0)
    assert outcome.reason == "battle"
    assert outcome.details["winner"] == "defender"
    assert outcome.details["winner_side"] == "tokugawa"
    assert outcome.details["impacts"] == {"attacker": 15, "defender": 25}
    assert outcome.details["casualties"] == {"attacker": 4, "defender": 2}
    # the two turned blocks first, then the weakest deployed, ties by deployment order
    assert outcome.details["removed"] == {
        "attacker": ["x06", "x07", "x01", "x02"],
        "defender": ["x11", "x12"],
    }


def test_worked_example_forced_decisions() -> None:
    """Where the example has no choice, the legal list is that one action."""
    state = worked_example()
    forced = {}
    for _, action, *_ in WORKED_EXAMPLE:
        if len(state.legal_actions()) == 1:
            forced[action] = state.legal_actions()
        state.apply_action(action)
    assert forced["decline"] == ["decline"]  # no mori card left to refute
    assert forced["stop"] == ["stop"]  # Ishida has deployed every block
    assert "pass" in forced  # Ishida holds no loyalty card


def test_worked_example_text_round_trip() -> None:
    state = worked_example()
    for _, action, *_ in WORKED_EXAMPLE:
        state.apply_action(action)
        again = GAME.state_from_text(state.to_text())
        assert again.to_text() == state.to_text()
        assert impacts(again) == impacts(state)
    assert GAME.state_from_text(state.to_text()).outcome() == state.outcome()


# --- one test per rule ------------------------------------------------------------


def test_initiative_lower_impact_acts_and_tie_goes_to_attacker() -> None:
    state = GAME.state_from_scenario(
        scenario("b01:mori:1l b02:mori:2", "I24:mori:p", "b11:date:1l b12:date:2", "T22:date:p")
    )
    assert state.current_player() == ATTACKER  # 0-0
    play(state, "leader b01")
    assert state.current_player() == DEFENDER  # 1-0
    play(state, "leader b11")
    assert impacts(state) == (1, 1)
    assert state.current_player() == ATTACKER  # tie


def test_free_leader_refused_after_a_card_was_played() -> None:
    state = GAME.state_from_scenario(
        scenario("b01:mori:1l b02:mori:2", "I24:mori:p", "b11:date:3", "T22:date:p")
    )
    play(state, "deploy I24 b02", "pass")  # 2-0, defender acts
    play(state, "deploy T22 b11", "pass")  # 2-3, attacker acts
    assert state.current_player() == ATTACKER
    assert state.legal_actions() == ["stop"]  # leader b01 only free before any card


def test_free_leader_refused_after_a_loyalty_challenge() -> None:
    """Ruling: a loyalty challenge card is a played card too."""
    state = GAME.state_from_scenario(
        scenario("b01:mori:2", "I24:mori:p", "b11:date:1l b12:date:1l", "T01:loyalty")
    )
    play(state, "deploy I24 b01", "challenge T01", "decline")  # 0-2
    assert state.current_player() == ATTACKER
    assert state.legal_actions() == ["stop"]
    play(state, "stop")
    assert state.legal_actions() == ["stop"]  # the defender's leaders are no longer free


def test_a_shown_card_can_be_shown_again_and_played_later() -> None:
    state = GAME.state_from_scenario(
        scenario(
            "b01:mori:2 b02:mori:3",
            "I24:mori:p I25:mori:p",
            "b11:date:4",
            "T01:loyalty T02:loyalty",
        )
    )
    play(state, "deploy I24 b01", "challenge T01", "refute I25")  # 2-0
    play(state, "stop")  # the defender cannot deploy
    play(state, "deploy I25 b02", "challenge T02")
    assert state.legal_actions() == ["decline"]  # I25 is gone now, no mori card left
    play(state, "decline")
    assert impacts(state) == (2, 3)


def test_several_free_leaders_and_leader_with_a_card() -> None:
    state = GAME.state_from_scenario(
        scenario("b01:mori:1l b02:ukita:1l", "I24:mori:p", "b11:date:4", "T22:date:p")
    )
    assert state.legal_actions()[:2] == ["leader b01", "leader b02"]
    assert "deploy I24 b01" in state.legal_actions()  # a leader may also come with a card
    play(state, "leader b01")
    assert state.current_player() == DEFENDER


def test_free_leader_cannot_be_challenged() -> None:
    state = GAME.state_from_scenario(
        scenario("b01:mori:1l", "-", "b11:date:2", "T01:loyalty T22:date:p")
    )
    play(state, "leader b01")
    assert state.phase == "act"
    assert state.current_player() == DEFENDER
    assert "challenge T01" not in state.legal_actions()


def test_card_deploys_only_matching_blocks() -> None:
    state = GAME.state_from_scenario(
        scenario("b01:mori:2 b02:ukita:3", "I24:mori:p I01:loyalty", "b11:date:2", "T22:date:p")
    )
    assert state.legal_actions() == ["deploy I24 b01", "stop"]


def test_stop_forced_when_nothing_can_be_deployed() -> None:
    state = GAME.state_from_scenario(
        scenario("b01:mori:2", "I48:ukita:p I01:loyalty", "b11:date:2", "T22:date:p")
    )
    assert state.legal_actions() == ["stop"]
    with pytest.raises(IllegalAction):
        state.apply_action("deploy I48 b01")


def test_stop_is_voluntary_when_a_deployment_is_possible() -> None:
    state = GAME.state_from_scenario(scenario("b01:mori:2", "I24:mori:p", "b11:date:2", "-"))
    play(state, "stop")
    assert state.current_player() == DEFENDER
    assert state.legal_actions() == ["stop"]
    play(state, "stop")
    assert state.is_terminal()
    assert state.outcome().details["impacts"] == {"attacker": 0, "defender": 0}  # type: ignore[union-attr]
    assert state.outcome().returns == (0.0, 1.0)  # type: ignore[union-attr]  # tie: defender


def test_double_card_lists_singles_and_ordered_pairs() -> None:
    state = GAME.state_from_scenario(
        scenario("b01:mori:2 b02:mori:1g b03:ukita:3", "I18:mori:d", "b11:date:2", "T22:date:p")
    )
    assert state.legal_actions() == [
        "deploy I18 b01",
        "deploy I18 b02",
        "deploy I18 b01,b02",
        "deploy I18 b02,b01",
        "stop",
    ]
    play(state, "deploy I18 b02,b01")
    assert impacts(state) == (1 + 3, 0)  # [mori gun] 1, [mori 2] 2 + 1


def test_double_card_with_only_one_matching_block() -> None:
    state = GAME.state_from_scenario(
        scenario("b01:mori:2 b03:ukita:3", "I18:mori:d", "b11:date:2", "T22:date:p")
    )
    assert state.legal_actions() == ["deploy I18 b01", "stop"]
    with pytest.raises(IllegalAction):
        state.apply_action("deploy I18 b01,b03")
    play(state, "deploy I18 b01")
    assert impacts(state) == (2, 0)


def test_double_card_never_special_attack() -> None:
    state = GAME.state_from_scenario(
        scenario("b01:mori:1g b02:mori:1c", "I18:mori:d", "b11:date:2", "T22:date:p")
    )
    play(state, "deploy I18 b01,b02")
    assert impacts(state) == (1 + 2, 0)


def test_special_attack_counts_same_kind_whatever_its_mon() -> None:
    state = GAME.state_from_scenario(
        scenario(
            "b01:ukita:1g b02:kobayakawa:1g b03:mori:1g b04:mori:1c",
            "I49:ukita:p I10:kobayakawa:p I19:mori:s I20:mori:s",
            "b11:date:4",
            "-",
        )
    )
    play(state, "deploy I49 b01", "pass")  # plain: 1, the gun mark ignored
    play(state, "stop")  # the defender cannot deploy; the attacker keeps the initiative
    play(state, "deploy I10 b02", "pass")  # 1
    assert impacts(state) == (2, 0)
    play(state, "deploy I19 b03", "pass")  # sword: 1 + 2 + 2 * two guns already deployed
    assert impacts(state) == (2 + 7, 0)
    play(state, "deploy I20 b04", "pass")  # cavalry: 1 + 1 (mori) + 2, no cavalry yet
    assert impacts(state) == (9 + 4, 0)


def test_sword_card_on_a_plain_block_is_a_plain_deployment() -> None:
    state = GAME.state_from_scenario(scenario("b01:mori:3", "I19:mori:s", "b11:date:4", "-"))
    play(state, "deploy I19 b01")
    assert impacts(state) == (3, 0)


def test_refuted_challenge_against_a_double_deployment() -> None:
    state = GAME.state_from_scenario(
        scenario(
            "b01:mori:2 b02:mori:3 b03:ukita:2",
            "I18:mori:d I24:mori:p I48:ukita:p",
            "b11:date:2",
            "T01:loyalty T22:date:p",
        )
    )
    play(state, "deploy I18 b01,b02")
    assert impacts(state) == (2 + 4, 0)
    play(state, "challenge T01")
    assert state.current_player() == ATTACKER
    # one mori card refutes the whole double; the ukita card does not
    assert state.legal_actions() == ["refute I24", "decline"]
    play(state, "refute I24")
    assert impacts(state) == (6, 0)
    assert state.sides[ATTACKER].hand == ["I24", "I48"]  # the shown card stays in hand
    assert state.sides[ATTACKER].field == ["b01", "b02"]
    assert "T01" not in state.sides[DEFENDER].hand
    # the shown card is public from now on, the other one is not
    seen = state.observation(DEFENDER)
    assert seen["revealed_cards"]["I24"] == "mori:p"
    assert "I48" not in json.dumps(seen)
    assert state.current_player() == DEFENDER


def test_declined_challenge_turns_blocks_and_bonuses_follow_them() -> None:
    state = GAME.state_from_scenario(
        scenario(
            "b01:mori:2 b02:mori:3",
            "I18:mori:d",
            "b11:mori:1 b12:date:1c",
            "T01:loyalty T19:date:s",
        )
    )
    play(state, "deploy I18 b01,b02", "challenge T01", "decline")
    assert impacts(state) == (0, 2 + 4)  # challenger: [2] 2, then [3] 3 + 1
    assert state.sides[DEFENDER].field == ["b01", "b02"]
    play(state, "stop")
    # Tokugawa's own mori block gets +2 from the two turned mori blocks
    assert "deploy T19 b12" in state.legal_actions()
    assert [a for a in state.legal_actions() if "b11" in a] == []  # no mori card


def test_turned_blocks_count_for_same_kind_bonus() -> None:
    state = GAME.state_from_scenario(
        scenario(
            "b01:mori:1g",
            "I19:mori:s",
            "b11:date:1g b12:date:2",
            "T01:loyalty T19:date:s",
        )
    )
    play(state, "deploy I19 b01", "challenge T01", "decline")
    assert impacts(state) == (0, 1)  # turned: mon icons only, no special attack
    play(state, "stop", "deploy T19 b11")
    assert impacts(state) == (0, 1 + 3 + 2)  # + 2 for the turned gun


def test_challenge_is_offered_with_pass_only_without_loyalty_card() -> None:
    """Ruling: the challenge turn always happens, so it reveals nothing."""
    state = GAME.state_from_scenario(
        scenario("b01:mori:2", "I24:mori:p", "b11:date:2", "T22:date:p")
    )
    play(state, "deploy I24 b01")
    assert state.phase == "challenge"
    assert state.current_player() == DEFENDER
    assert state.legal_actions() == ["pass"]


def test_stopped_side_keeps_challenging_and_other_keeps_initiative() -> None:
    state = GAME.state_from_scenario(
        scenario(
            "b01:mori:2",
            "I24:mori:p",
            "b11:date:2 b12:date:3 b13:date:1",
            "T22:date:p T23:date:p T24:date:p T01:loyalty",
        )
    )
    play(state, "stop")
    play(state, "deploy T22 b11")
    assert state.current_player() == ATTACKER  # the stopped side decides on a challenge
    assert state.legal_actions() == ["pass"]
    play(state, "pass")
    assert impacts(state) == (0, 2)
    assert state.current_player() == DEFENDER  # keeps the initiative though ahead
    play(state, "deploy T23 b12", "pass")
    assert state.current_player() == DEFENDER
    play(state, "stop")
    assert state.is_terminal()


def test_stopped_side_plays_a_loyalty_challenge() -> None:
    state = GAME.state_from_scenario(
        scenario("b01:ukita:2", "I01:loyalty", "b11:date:2", "T22:date:p")
    )
    assert state.legal_actions() == ["stop"]
    play(state, "stop", "deploy T22 b11")
    assert state.legal_actions() == ["challenge I01", "pass"]
    play(state, "challenge I01")
    assert state.legal_actions() == ["decline"]
    play(state, "decline")
    assert impacts(state) == (2, 0)
    assert state.sides[ATTACKER].field == ["b11"]


def test_any_card_blocks() -> None:
    state = GAME.state_from_scenario(
        scenario(
            "b01:ishida:1l* b02:mori:2",
            "I24:mori:p",
            "b11:ii:4* b12:date:2",
            "T44:tokugawa:s T01:loyalty T47:tokugawa:p",
        )
    )
    # Ishida Mitsunari is a leader: free, or with a card of any mon
    assert state.legal_actions() == ["leader b01", "deploy I24 b01", "deploy I24 b02", "stop"]
    play(state, "deploy I24 b02", "pass")  # 2-0
    # Ii Naomasa comes with a card of any mon, never with a loyalty card
    assert state.legal_actions() == ["deploy T44 b11", "deploy T47 b11", "stop"]
    play(state, "deploy T44 b11")
    assert impacts(state) == (2, 4)


def test_any_card_block_refuted_by_any_card() -> None:
    """Ruling: any card refutes a challenge against an any-card block, a loyalty card too."""
    state = GAME.state_from_scenario(
        scenario("b01:ishida:1l*", "I24:mori:p I01:loyalty", "b11:date:2", "T01:loyalty")
    )
    play(state, "deploy I24 b01", "challenge T01")
    assert state.legal_actions() == ["refute I01", "decline"]


def test_mixed_double_needs_a_card_matching_every_block() -> None:
    """Ruling: for Ii Naomasa with a tokugawa block, only a tokugawa card refutes."""
    state = GAME.state_from_scenario(
        scenario(
            "b01:mori:4",
            "I01:loyalty",
            "b11:ii:4* b12:tokugawa:2",
            "T40:tokugawa:d T47:tokugawa:p T22:date:p",
            attacker="tokugawa",
        )
    )
    play(state, "deploy T40 b11,b12", "challenge I01")
    assert state.legal_actions() == ["refute T47", "decline"]
    play(state, "decline")
    assert impacts(state) == (0, 4 + 2)


def test_siege_has_no_challenges_and_no_special_attacks() -> None:
    state = GAME.state_from_scenario(
        scenario(
            "b01:mori:1g b02:mori:1c",
            "I19:mori:s I20:mori:s",
            "b11:date:2 b12:date:3",
            "T01:loyalty T22:date:p",
            variant="siege",
        )
    )
    play(state, "deploy I19 b01")
    assert state.phase == "act"  # no challenge turn
    assert impacts(state) == (1, 0)  # sword ignored
    play(state, "deploy T22 b11")
    assert state.current_player() == ATTACKER
    play(state, "deploy I20 b02")
    assert impacts(state) == (1 + 2, 2)
    assert all(not a.startswith("challenge") for a in state.legal_actions())


def test_siege_defender_has_at_most_two_blocks() -> None:
    with pytest.raises(GameError, match="siege"):
        scenario("b01:mori:2", "-", "b11:date:2 b12:date:2 b13:date:2", "-", variant="siege")
    # the attacker may have any number
    scenario("b01:mori:2 b02:mori:2 b03:mori:2", "-", "b11:date:2", "-", variant="siege")


@pytest.mark.parametrize(
    ("attacker_cards", "defender_plays", "winner", "defender_lost"),
    [
        # the defender wins 9-0: the attacker would lose 9 // 7 + 1 = 2 in a battle
        ("-", ["deploy T22 b11", "deploy T23 b12"], "defender", 0),
        # the attacker wins 4+5+6 = 15 to 0: the defender loses 15 // 7 + 1 = 3, capped at 2
        ("I24:mori:p I25:mori:p I26:mori:p", [], "attacker", 2),
    ],
)
def test_siege_attacker_takes_no_casualties(
    attacker_cards: str, defender_plays: list[str], winner: str, defender_lost: int
) -> None:
    state = GAME.state_from_scenario(
        scenario(
            "b01:mori:4 b02:mori:4 b03:mori:4",
            attacker_cards,
            "b11:date:4 b12:date:4",
            "T22:date:p T23:date:p",
            variant="siege",
        )
    )
    while not state.is_terminal():
        legal = state.legal_actions()
        if state.current_player() == DEFENDER and defender_plays:
            state.apply_action(defender_plays.pop(0))
        else:
            state.apply_action(legal[0] if state.current_player() == ATTACKER else "stop")
    outcome = state.outcome()
    assert outcome is not None
    assert outcome.details["winner"] == winner
    assert outcome.details["casualties"] == {"attacker": 0, "defender": defender_lost}
    assert outcome.details["removed"]["attacker"] == []


def test_casualty_order_turned_then_deployed_then_undeployed() -> None:
    state = GAME.state_from_scenario(
        scenario(
            "b01:mori:3 b02:mori:2 b03:ukita:1 b04:ukita:3 b05:mori:4 b06:uesugi:1",
            "I24:mori:p I25:mori:p I48:ukita:p",
            "b11:date:4 b12:date:4 b13:date:4",
            "T01:loyalty T17:date:d T22:date:p",
        )
    )
    play(state, "deploy I24 b01", "pass")  # 3
    play(state, "deploy T17 b11,b12", "pass")  # 4 + 5 = 9
    play(state, "deploy I25 b02", "challenge T01", "decline")  # b02 turns: 9 + 2
    play(state, "deploy I48 b04", "pass")  # 3 + 3 = 6
    play(state, "stop", "deploy T22 b13", "pass", "stop")  # 11 + 6 = 17
    assert impacts(state) == (6, 17)
    outcome = state.outcome()
    assert outcome is not None
    # attacker: 17 // 7 = 2, + 1 as loser: the turned [mori 2], then [mori 3] and
    # [ukita 3] deployed (equal strength: deployment order)
    assert outcome.details["removed"]["attacker"] == ["b02", "b01", "b04"]
    assert outcome.details["removed"]["defender"] == []  # 6 < 7


def test_casualties_reach_undeployed_blocks_weakest_first_and_stop_at_army_size() -> None:
    state = GAME.state_from_scenario(
        scenario(
            "b01:mori:3 b02:mori:2 b03:ukita:1",
            "-",
            "b11:date:4 b12:date:3 b13:date:2",
            "T22:date:p T23:date:p T24:date:p",
        )
    )
    play(state, "stop")
    play(state, "deploy T22 b11", "pass", "deploy T23 b12", "pass", "deploy T24 b13", "pass")
    play(state, "stop")
    outcome = state.outcome()
    assert outcome is not None
    assert outcome.details["impacts"] == {"attacker": 0, "defender": 4 + 4 + 4}
    # 12 // 7 = 1, + 1: undeployed weakest first
    assert outcome.details["removed"]["attacker"] == ["b03", "b02"]
    assert outcome.returns == (0.0, 1.0)


# --- notation, scenario and game plumbing -------------------------------------------


def test_registry_finds_the_game() -> None:
    game = get_game("sekigahara")
    assert game is GAME
    assert tuple(game.variants) == ("battle", "siege")
    state = game.new_state()
    assert state.player_names() == ("attacker", "defender")
    assert state.current_player() == ATTACKER
    assert game.new_state("siege").scenario.variant == "siege"
    with pytest.raises(GameError):
        game.new_state("skirmish")


def test_notation_parsing() -> None:
    assert parse_action("  deploy   I18  b01,b02 ").text() == "deploy I18 b01,b02"
    assert parse_action("leader b01").blocks == ("b01",)
    for bad in ["", "attack b01", "stop now", "deploy I18", "deploy I18 b1,b2,b3", "pass x"]:
        with pytest.raises(IllegalAction):
            parse_action(bad)
    state = GAME.new_state()
    with pytest.raises(IllegalAction):
        state.apply_action("deploy I02 b01")  # a loyalty card deploys nothing
    state.apply_action("  leader   b05 ")
    assert state.history(0) == ["leader b05"]


def test_scenario_toml_and_text_round_trip() -> None:
    for variant in ("battle", "siege"):
        sc = default_scenario(variant)
        assert load_toml(sc.to_toml()) == sc
        assert Scenario.from_text(sc.to_text()) == sc


def test_scenario_validation() -> None:
    with pytest.raises(GameError, match="twice"):
        scenario("b01:mori:2", "I24:mori:p", "b01:date:2", "-")
    with pytest.raises(GameError, match="strength"):
        Block("b01", "mori", 5)
    with pytest.raises(GameError, match="1 mon icon"):
        Block("b01", "mori", 2, Mark.GUN)
    with pytest.raises(GameError):
        Card("I01", CardKind.LOYALTY, "mori")
    with pytest.raises(GameError):
        load_toml('variant = "battle"\nattacker = "mori"\n[ishida]\n[tokugawa]\n')
    with pytest.raises(GameError):
        GAME.state_from_text("sekigahara battle attacker=ishida moves=")
    with pytest.raises(GameError, match="move 3"):
        GAME.state_from_text(GAME.new_state().to_text() + "stop;stop;stop")


def test_decks_and_default_armies() -> None:
    for side, loyalty in (("ishida", 3), ("tokugawa", 4)):
        cards = deck(side)
        assert len(cards) == 55
        assert sum(c.loyalty for c in cards) == loyalty
        assert sum(c.kind is CardKind.DOUBLE for c in cards) == 4
        army = default_army(side)
        assert len(army) == 21
        assert sum(b.any_card for b in army) == 1
    assert [c.mon for c in deck("ishida") if c.kind is CardKind.SWORD].count("uesugi") == 3
    assert default_army("tokugawa")[-1] == Block("b42", "ii", 4, Mark.NONE, True)
    assert default_army("ishida")[-1] == Block("b21", "ishida", 1, Mark.LEADER, True)


def test_deal_is_seeded() -> None:
    a, b = deal(random.Random(7)), deal(random.Random(7))
    assert a == b
    assert len(a.ishida.hand) == len(a.tokugawa.hand) == 6
    siege = deal(random.Random(3), "siege")
    assert len(siege.army(DEFENDER).blocks) == 2
    assert len(siege.army(ATTACKER).blocks) == 21
    assert GAME.random_opening("battle", 5, random.Random(7)).scenario == a
    attackers = {deal(random.Random(seed)).attacker for seed in range(20)}
    assert attackers == {"ishida", "tokugawa"}


def test_swap_roles() -> None:
    sc = default_scenario()
    swapped = swap_roles(sc)
    assert swapped.attacker == "tokugawa"
    assert swapped.army(ATTACKER) == sc.army(DEFENDER)
    assert swap_roles(swapped) == sc
    with pytest.raises(GameError, match="siege"):
        swap_roles(default_scenario("siege"))


def test_clone_is_independent() -> None:
    state = GAME.new_state()
    play(state, "leader b05")
    copy = state.clone()
    play(copy, "deploy T09 b24")
    assert state.to_text() != copy.to_text()
    assert state.sides[DEFENDER].hand == ["T03", "T09", "T18", "T26", "T38", "T44"]
    assert GAME.state_from_text(copy.to_text()).to_text() == copy.to_text()


def test_observation_shows_own_secrets_and_only_counts_of_the_opponent() -> None:
    state = GAME.new_state()
    play(state, "leader b05", "deploy T09 b24")
    seen = state.observation(ATTACKER)
    assert seen["you"] == "attacker"
    assert seen["hand"][0] == "I02:loyalty"
    assert seen["opponent_hand"] == 5
    assert seen["opponent_reserve"] == 20
    assert seen["phase"] == "challenge"
    assert seen["to_move"] == "attacker"
    assert seen["pending"]["card"] == "T09"
    assert seen["revealed_blocks"] == {"b05": "kobayakawa:1l", "b24": "fukushima:1g"}
    text = state.observation_text(ATTACKER)
    assert "T03" not in text and "T18" not in text and "b22" not in text
    assert "I02:loyalty" in text
    assert " impact=1-3 " in text
    assert state.history(DEFENDER) == ["leader b05", "deploy T09 b24"]


# --- properties ------------------------------------------------------------------

TOKEN_SPLIT = re.compile(r"[\s,;:/=+!*\"'{}\[\]]+")


def hidden_ids(state: SekigaharaState, viewer: int) -> set[str]:
    """The opponent's hand cards never shown, and its undeployed blocks."""
    opp = state.sides[1 - viewer]
    return {c for c in opp.hand if c not in state.revealed_cards} | set(opp.reserve)


def assert_no_leak(state: SekigaharaState) -> None:
    for viewer in (0, 1):
        secret = hidden_ids(state, viewer)
        texts = [
            state.observation_text(viewer),
            json.dumps(state.observation(viewer)),
            " ".join(state.history(viewer)),
        ]
        for text in texts:
            assert not secret & set(TOKEN_SPLIT.split(text)), (viewer, secret, text)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    variant=st.sampled_from(["battle", "siege"]),
    hand_size=st.integers(0, 12),
)
def test_random_play_ends_keeps_secrets_and_round_trips(
    seed: int, variant: str, hand_size: int
) -> None:
    rng = random.Random(seed)
    state = GAME.state_from_scenario(deal(rng, variant, hand_size))
    for _ in range(500):
        if state.is_terminal():
            break
        assert_no_leak(state)
        text = state.to_text()
        assert GAME.state_from_text(text).to_text() == text
        copy = state.clone()
        assert copy.to_text() == text
        assert copy.legal_actions() == state.legal_actions()
        assert copy.observation(0) == state.observation(0)
        assert "\n" not in text and "\n" not in state.observation_text(0)
        legal = state.legal_actions()
        assert legal and len(set(legal)) == len(legal)
        state.apply_action(rng.choice(legal))
    assert state.is_terminal()
    assert state.legal_actions() == []
    outcome = state.outcome()
    assert outcome is not None and outcome.returns in ((1.0, 0.0), (0.0, 1.0))
    assert_no_leak(state)
    assert GAME.state_from_text(state.to_text()).outcome() == outcome
    # impacts are the sums of what every block on each side added
    for role in (0, 1):
        field = state.observation(role)["field"]
        for name in ("attacker", "defender"):
            assert sum(f["added"] for f in field[name]) == outcome.details["impacts"][name]


GOOD_BLOCK = '{ id = "b1", mon = "mori", strength = 1, mark = "gun" }'
GOOD_CARD = '{ id = "I2", mon = "mori", kind = "sword" }'


@pytest.mark.parametrize(
    ("blocks", "hand", "error"),
    [
        ('[{ id = "b1", mon = "mori" }]', "[]", r"scenario: bad block .*: 'strength'$"),
        (f"[{GOOD_BLOCK}, 3]", "[]", r"scenario: bad block 3$"),  # the table is read
        ('["b1:mori:9"]', "[]", "bad block token 'b1:mori:9'"),
        ("[]", '[{ id = "I1", mon = "mori", kind = "axe" }]', "scenario: bad card .*'axe'"),
        ("[]", f'["I1:loyalty", {GOOD_CARD}, []]', r"scenario: bad card \[\]$"),
    ],
)
def test_a_bad_block_or_card_of_a_scenario_is_shown(blocks: str, hand: str, error: str) -> None:
    text = f'[ishida]\nblocks = {blocks}\nhand = {hand}\n[tokugawa]\nblocks = ["b2:date:1"]\n'
    with pytest.raises(GameError, match=error):
        load_toml(text)
