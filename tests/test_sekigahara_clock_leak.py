"""Sekigahara: the bytes a player reads never depend on the opponent's secrets, clocks included.

Two deals that differ only in the opponent's hidden cards or blocks (a *twin*: some
of them replaced by others of another kind, a loyalty card by a plain one and back)
are played through the real referee with the same public actions. Each engine is
a stand-in that records the exact lines the referee writes to it (encoded as
``Engine`` encodes them) and answers from a script after exactly ``THINK`` seconds,
so the clocks are deterministic. The viewer's stream must then be byte for byte
the same in both games: ``go`` requests with their ``remaining_ms``, ``newgame`` and
``gameover``. The opponent only plays actions legal in both deals, so the rules
never reveal the difference (the reveals themselves are checked by the no-leak
test in ``test_sekigahara_arena.py``).

This caught the clock leak: a ``pass`` forced only because the hand holds no
loyalty card used to be played without asking, so it earned no increment and the
opponent's ``remaining_ms`` told whether a loyalty card was held.
"""

from __future__ import annotations

import random
from typing import Any

import msgspec
import trio
from hypothesis import given, settings
from hypothesis import strategies as st
from test_sekigahara_arena import twin

from arena.engine.exchange import Reply
from arena.games.sekigahara import GAME, Scenario, SekigaharaState
from arena.games.sekigahara.scenario import deal
from arena.match.clock import TimeControl
from arena.match.record import SandboxRecord
from arena.match.referee import play_game
from arena.protocol.messages import Action, Go, NewGame, Ready, encode_line

THINK = 0.02
"""Seconds every scripted answer takes: less than the increment, so a decision
that is asked shows on the clock."""
SENT_AT = 1000.0
"""A fixed request time: the clock only charges ``received_at - sent_at``, and a
fixed float keeps that difference bit-identical in both games."""


class ScriptedEngine:
    """Stands in for ``Engine`` in ``play_game``: records bytes, answers from a script."""

    def __init__(self, name: str, script: list[str]) -> None:
        self.name = name
        self.script = script
        self.lines: list[bytes] = []
        self.asked: list[Go] = []
        self.running = True
        self.starts = 1
        self.leeway = 0.0  # no network between the referee and this stand-in
        self.identity = None
        self.sandbox_record = SandboxRecord(mode="none")
        self._next_id = 0

    def _write(self, msg: Any) -> None:
        self._next_id += 1
        self.lines.append(encode_line(msgspec.structs.replace(msg, id=self._next_id)))

    def stderr_tail(self, *, clear: bool = False) -> str:
        return ""

    def cpu_seconds(self) -> float | None:
        return None  # no cgroup: the referee charges wall time

    def round_trip_ms(self) -> float | None:
        return None  # a local bot: no network

    async def new_game(self, msg: NewGame, timeout: float = 10.0) -> Reply:
        self._write(msg)
        return Reply(Ready(id=self._next_id), (), SENT_AT, SENT_AT)

    async def go(self, msg: Go, timeout: float) -> Reply:
        self._write(msg)
        self.asked.append(msg)
        action = self.script[len(msg.history)]
        return Reply(Action(id=self._next_id, action=action), (), SENT_AT, SENT_AT + THINK)

    async def notify(self, msg: Any, timeout: float = 1.0) -> None:
        self.lines.append(encode_line(msg))

    async def stop(self, graceful: bool = True) -> None:
        self.running = False


def shared_script(
    real: SekigaharaState, double: SekigaharaState, viewer: int, seed: int
) -> list[str]:
    """One action list legal in both battles: the viewer picks from its legal actions
    (the same in both, as they depend only on its own hand), the opponent only from
    the actions both deals allow."""
    rng = random.Random(seed)
    real, double = real.clone(), double.clone()
    script = []
    while not real.is_terminal():
        assert double.current_player() == real.current_player()  # turn order is public
        legal = real.legal_actions()
        if real.current_player() == viewer:
            assert double.legal_actions() == legal
        else:
            legal = [a for a in legal if a in double.legal_actions()]
        action = rng.choice(legal)
        script.append(action)
        real.apply_action(action)
        double.apply_action(action)
    assert double.is_terminal()
    return script


async def viewer_streams(
    scenarios: tuple[Scenario, Scenario], viewer: int, script: list[str], tc: TimeControl
) -> list[tuple[ScriptedEngine, ScriptedEngine]]:
    """Both games through ``play_game``; the engines (viewer's first) of each."""
    out = []
    for scenario in scenarios:
        engines = [ScriptedEngine("p0", script), ScriptedEngine("p1", script)]
        opening = GAME.state_from_scenario(scenario)
        record = await play_game(GAME, opening, engines, [tc, tc], variant=scenario.variant)
        assert record.reason == "battle", record.detail
        assert [a.action for a in record.actions] == script
        out.append((engines[viewer], engines[1 - viewer]))
    return out


def secrets(scenario: Scenario, owner: int, picks: list[bool]) -> set[str]:
    army = scenario.army(owner)
    ids = [c.id for c in army.hand] + [b.id for b in army.blocks]
    return {i for i, pick in zip(ids, picks + [False] * len(ids), strict=False) if pick}


def check_same_stream(scenario: Scenario, viewer: int, secret: set[str], seed: int, tc: str) -> int:
    """Play the deal and its twin; assert the viewer's bytes are identical.
    Returns how many decisions with one legal action the opponent was asked for."""
    double_scenario = twin(scenario, viewer, secret).scenario
    real, double = GAME.state_from_scenario(scenario), GAME.state_from_scenario(double_scenario)
    script = shared_script(real, double, viewer, seed)
    control = TimeControl.parse(tc)
    (mine, theirs), (mine2, theirs2) = trio.run(
        viewer_streams, (scenario, double_scenario), viewer, script, control
    )
    assert mine.asked, "the viewer was never asked: the test would prove nothing"
    for n, (line, line2) in enumerate(zip(mine.lines, mine2.lines, strict=True)):
        if line != line2:
            pairs = zip(line, line2, strict=False)
            at = next((i for i, (a, b) in enumerate(pairs) if a != b), min(len(line), len(line2)))
            raise AssertionError(
                f"line {n} to the viewer differs at byte {at}: "
                f"{line[at - 60 : at + 20]!r} vs {line2[at - 60 : at + 20]!r}"
            )
    if secret & {c.id for c in scenario.army(1 - viewer).hand}:
        assert theirs.lines != theirs2.lines  # the opponent's own view does differ
    return sum(len(go.legal) == 1 for go in theirs.asked + theirs2.asked)


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**32 - 1),
    variant=st.sampled_from(["battle", "battle", "siege"]),
    viewer=st.integers(0, 1),
    picks=st.lists(st.booleans(), min_size=1, max_size=27),
    tc=st.sampled_from(["5+0.1", "3/5+0.1", "5"]),
)
def test_opponents_secrets_never_change_the_viewers_bytes(
    seed: int, variant: str, viewer: int, picks: list[bool], tc: str
) -> None:
    scenario = deal(random.Random(seed), variant)
    secret = secrets(scenario, 1 - viewer, picks)
    if not secret:
        secret = {scenario.army(1 - viewer).hand[0].id}
    check_same_stream(scenario, viewer, secret, seed, tc)


def test_a_pass_forced_by_a_hand_without_loyalty_is_asked_and_timed() -> None:
    """The leak itself: the defender holds no loyalty card in one deal and two in
    the other; in both it is asked for its ``pass`` and the attacker's clocks agree."""
    rng = random.Random(7)
    for _ in range(200):
        scenario = deal(rng, "battle")
        hand = scenario.army(1).hand
        if not any(c.loyalty for c in hand):
            break
    else:
        raise AssertionError("no deal without a loyalty card for the defender")
    # Swap two of the defender's cards for loyalty cards in the twin.
    secret = {hand[0].id, hand[1].id}
    asked_single = check_same_stream(scenario, 0, secret, seed=1, tc="5+0.1")
    assert asked_single > 0, "no forced pass or decline was played: nothing was tested"


def test_forced_action_is_only_what_the_opponent_can_see() -> None:
    """Rules-core side: which single legal actions the referee may play itself."""
    from test_sekigahara import WORKED_EXAMPLE, worked_example

    state = worked_example()
    seen = []
    for _, action, *_ in WORKED_EXAMPLE:
        if len(state.legal_actions()) == 1:
            seen.append((action, state.forced_action()))
        else:
            assert state.forced_action() is None
        state.apply_action(action)
    # Ishida's passes: no loyalty card in a hand of 4, 3, 1 cards (hidden); then
    # with an empty hand and reserve everything is forced for all to see.
    assert seen == [
        ("pass", None),
        ("pass", None),
        ("pass", None),
        ("decline", "decline"),
        ("stop", "stop"),
        ("pass", "pass"),
        ("stop", "stop"),
    ]
    hidden = GAME.state_from_scenario(
        Scenario.from_text(
            "battle attacker=ishida ishida=b01:mori:2,b02:uesugi:2/I24:mori:p,I48:ukita:p"
            " tokugawa=b11:date:2/T01:loyalty"
        )
    )
    for action in ("deploy I24 b01", "challenge T01"):
        hidden.apply_action(action)
    assert hidden.legal_actions() == ["decline"]  # the ukita card cannot refute
    assert hidden.forced_action() is None
    hidden.apply_action("decline")
    assert hidden.legal_actions() == ["stop"]  # the ukita card matches no block in reserve
    assert hidden.forced_action() is None  # ... but the reserve is hidden


class Asked(msgspec.Struct, frozen=True):
    """One ``go`` as a real engine got it, and what its answer took."""

    player: int
    remaining_ms: int
    """The player's own clock in the request."""
    increment_ms: int
    elapsed_ms: int
    """Request written to answer read, as the engine measured it."""


def test_real_bots_answer_the_decisions_forced_by_their_secrets() -> None:
    """Through real processes: a hidden-forced action is a timed ``go`` that the
    built-in bots answer, recorded as asked (not forced) with its time charged.

    Charged: the record's ``ms`` of every asked decision is what the engine
    measured for that ``go``, and the player's clock in their next ``go`` is the
    one before less that time plus the increment (1 ms of rounding either way).
    A forced action costs nothing and asks nothing.
    """
    from arena.engine.bot import Engine
    from arena.engine.config import EngineConfig
    from arena.plan.builtins import resolve_builtin

    def recorded(engine: Engine, log: list[Asked]) -> None:
        go = engine.go

        async def recording_go(msg: Go, timeout: float) -> Any:
            reply = await go(msg, timeout)
            clock = msg.clock
            own = clock.remaining_ms[msg.player]
            log.append(Asked(msg.player, own, clock.increment_ms, reply.elapsed_ms))
            return reply

        engine.go = recording_go  # type: ignore[method-assign]

    async def games() -> list[tuple[Any, list[Asked]]]:
        played = []
        config = EngineConfig(name="g", command=resolve_builtin("battle-greedy"))
        config2 = EngineConfig(name="r", command=resolve_builtin("random"))
        log: list[Asked] = []
        async with Engine(config) as greedy, Engine(config2) as rnd:
            recorded(greedy, log)
            recorded(rnd, log)
            rng = random.Random(11)
            for _ in range(4):
                opening = GAME.random_opening("battle", 0, rng)
                for seats in ([greedy, rnd], [rnd, greedy]):
                    tc = [TimeControl.parse("5+0.1")] * 2
                    record = await play_game(GAME, opening, seats, tc, variant="battle")
                    played.append((record, log.copy()))
                    log.clear()
        return played

    asked_single = charged = 0
    for record, log in trio.run(games):
        assert record.reason == "battle", (record.reason, record.detail)
        state = GAME.state_from_text(record.opening)
        for action in record.actions:
            single = len(state.legal_actions()) == 1
            assert action.forced == (state.forced_action() is not None)
            if single and not action.forced:
                asked_single += 1
            if action.forced:
                assert action.ms == 0
            state.apply_action(action.action)
        for player in (0, 1):
            asked = [a for a in log if a.player == player]
            decisions = [a for a in record.actions if a.player == player and not a.forced]
            assert [a.ms for a in decisions] == [a.elapsed_ms for a in asked]
            for before, after in zip(asked, asked[1:], strict=False):
                expected = before.remaining_ms - before.elapsed_ms + before.increment_ms
                assert abs(after.remaining_ms - expected) <= 1, (before, after)
            charged += sum(a.elapsed_ms for a in asked)
    assert asked_single > 0, "no hidden-forced decision came up: nothing was tested"
    assert charged > 0, "no decision took a millisecond: the clocks were not tested"
