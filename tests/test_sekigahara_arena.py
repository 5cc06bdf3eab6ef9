"""The Sekigahara battle through the arena: secrets stay secret, tournaments, the greedy bot.

* **No leak.** Real games through the real ``Engine`` and ``play_game``, with bots
  that log every raw line they read. For each game and seat the test checks the
  actual bytes: no id of a card still hidden in the opponent's hand, nor of a block
  still in the opponent's reserve, ever reaches the bot; and every structured field
  is exactly what a *twin* battle gives, in which the opponent's hidden cards and
  blocks are replaced by different ones (other ids, mons and kinds). A message that
  depended on anything hidden would differ from the twin's.
* **Tournament.** A round robin of the battle bots through ``Tournament``: every
  game ends by the rules, every deal is played twice with the seats swapped, and
  the reports show the standings.
* **Greedy.** In-process games (rules core only) of ``battle-greedy`` against a
  random player, and its decisions on hand-built positions.
"""

from __future__ import annotations

import json
import random
import re
import sys
import time
from pathlib import Path
from typing import Any

import trio
from arena.bots.battle_greedy_bot import choose_action

from arena.engine.bot import Engine
from arena.engine.config import EngineConfig
from arena.engine.sandbox import Sandbox
from arena.games.sekigahara import GAME, Scenario, SekigaharaState
from arena.games.sekigahara.cards import Block, Card, CardKind
from arena.games.sekigahara.scenario import Army
from arena.match.clock import TimeControl
from arena.match.record import FAULT_REASONS, GameRecord
from arena.match.referee import play_game
from arena.plan.config import load_config
from arena.plan.schedule import build_schedule
from arena.report import HTML_NAME, MARKDOWN_NAME, write_reports
from arena.storage.store import Store
from arena.tournament import Tournament

# A bot that appends every raw line it reads to a file before the SDK decodes it.
# "greedy" plays like battle-greedy (so challenges and refutations happen), any
# other mode picks a seeded random legal action.
LOGGING_BOT = r"""
import random, sys
from arena.sdk import Bot, serve
from arena.bots.battle_greedy_bot import choose_action

log_path, mode, seed = sys.argv[1], sys.argv[2], int(sys.argv[3])
rng = random.Random(seed)

def lines():
    with open(log_path, "ab", buffering=0) as log:
        for line in sys.stdin.buffer:
            log.write(line)
            yield line

class Logger(Bot):
    name = "logger"
    games = ("sekigahara",)

    def choose(self, request):
        if mode == "greedy":
            return choose_action(request.observation, request.legal, rng)
        return rng.choice(request.legal)

sys.exit(serve(Logger(), stdin=lines()))
"""

TC = TimeControl.parse("5+0.1")
DEALS = {"battle": 4, "siege": 2}
"""Seeded deals per variant; each is played twice, seats swapped."""


def normalized(value: Any) -> Any:
    """``value`` as it looks after a JSON round trip (tuples become lists)."""
    return json.loads(json.dumps(value))


def id_pattern(ids: set[str]) -> re.Pattern[str] | None:
    """A regex finding any of ``ids`` as a whole token (not inside a longer id)."""
    if not ids:
        return None
    alternatives = "|".join(sorted(map(re.escape, ids), key=len, reverse=True))
    return re.compile(rf"(?<![A-Za-z0-9_-])(?:{alternatives})(?![A-Za-z0-9_-])")


def hidden_ids(state: SekigaharaState, viewer: int) -> set[str]:
    """Ids of the opponent's cards still unseen in hand and blocks still in reserve."""
    opponent = state.sides[1 - viewer]
    cards = {c for c in opponent.hand if c not in state.revealed_cards}
    return cards | set(opponent.reserve)


def twin(scenario: Scenario, viewer: int, secret: set[str]) -> SekigaharaState:
    """The same battle with every ``secret`` card and block of the opponent replaced.

    A replaced card gets a new id and another kind (a loyalty card becomes a plain
    card of a made-up mon, any other card a loyalty card); a replaced block gets a
    new id, a made-up mon and another strength. The recorded actions never use a
    secret card or block, so they replay unchanged on the twin.
    """
    army = scenario.army(1 - viewer)
    hand = tuple(
        (Card(f"zc{i}", CardKind.PLAIN, "zzz") if c.loyalty else Card(f"zc{i}", CardKind.LOYALTY))
        if c.id in secret
        else c
        for i, c in enumerate(army.hand)
    )
    blocks = tuple(
        Block(f"zb{i}", "zzz", 4 if b.strength < 4 else 2) if b.id in secret else b
        for i, b in enumerate(army.blocks)
    )
    replaced = Army(blocks, hand)
    side = scenario.side(1 - viewer)
    return SekigaharaState(
        Scenario(
            scenario.variant,
            scenario.attacker,
            replaced if side == "ishida" else scenario.ishida,
            replaced if side == "tokugawa" else scenario.tokugawa,
        )
    )


def split_games(log: Path) -> list[list[bytes]]:
    """The raw lines a bot read, one list per game (each game starts with ``newgame``)."""
    games: list[list[bytes]] = []
    for line in log.read_bytes().splitlines():
        if json.loads(line)["type"] == "newgame":
            games.append([])
        if games:
            games[-1].append(line)
    return games


def check_no_leak(record: GameRecord, viewer: int, lines: list[bytes]) -> None:
    """Everything ``viewer`` read during one game: no hidden id, nothing the twin lacks."""
    real = GAME.state_from_text(record.opening)
    final = GAME.state_from_text(record.final_position)
    never_shown = hidden_ids(final, viewer)
    assert never_shown, "the opponent kept nothing hidden: the test would prove nothing"
    raw = b"\n".join(lines).decode()
    found = id_pattern(never_shown).search(raw)  # type: ignore[union-attr]
    assert found is None, f"{found.group()} (never shown) sent to player {viewer}"
    double = twin(real.scenario, viewer, never_shown)

    messages = [json.loads(line) for line in lines]
    assert messages[0]["type"] == "newgame"
    assert messages[0]["position"] == double.observation_text(viewer)
    goes = iter((m, line) for m, line in zip(messages, lines, strict=True) if m["type"] == "go")
    asked = 0
    for action in record.actions:
        if action.player == viewer and not action.forced:
            message, line = next(goes)
            asked += 1
            hidden_now = id_pattern(hidden_ids(real, viewer))
            leak = hidden_now.search(line.decode()) if hidden_now else None
            assert leak is None, f"{leak.group()} (hidden at this point) sent to {viewer}"
            assert message["position"] == double.observation_text(viewer)
            assert message["observation"] == normalized(double.observation(viewer))
            assert message["history"] == double.history(viewer)
            assert message["legal"] == double.legal_actions()
            assert isinstance(message["observation"]["opponent_hand"], int)
            assert isinstance(message["observation"]["opponent_reserve"], int)
        real.apply_action(action.action)
        double.apply_action(action.action)
    assert next(goes, None) is None, "a go request that matches no decision of the record"
    assert asked > 0
    assert real.to_text() == record.final_position


async def play_logged_games(tmp_path: Path) -> tuple[list[GameRecord], Path, Path]:
    """Two logging bots (greedy and random) play every deal of :data:`DEALS` twice,
    seats swapped, through the real engines and referee."""
    script = tmp_path / "logging_bot.py"
    script.write_text(LOGGING_BOT)
    logs = tmp_path / "greedy.log", tmp_path / "random.log"
    tmp_path.chmod(0o777)  # the bots run as nobody under a root arena
    # The script imports the built-in bots' package: a read-only grant of its folder.
    bots_folder = str(Path(__file__).resolve().parents[1] / "bots")
    grant = Sandbox(rw=[str(tmp_path)], ro=[bots_folder])
    commands = [
        [sys.executable, str(script), str(logs[0]), "greedy", "1"],
        [sys.executable, str(script), str(logs[1]), "random", "2"],
    ]
    records = []
    async with (
        # The bots write their logs into tmp_path: a writable grant of the sandbox.
        Engine(EngineConfig(name="greedy", command=commands[0], sandbox=grant)) as greedy,
        Engine(EngineConfig(name="random", command=commands[1], sandbox=grant)) as rnd,
    ):
        for variant, deals in DEALS.items():
            rng = random.Random(f"leak-{variant}")
            for _ in range(deals):
                opening = GAME.random_opening(variant, 1, rng)
                for seats in ([greedy, rnd], [rnd, greedy]):
                    record = await play_game(GAME, opening, seats, [TC, TC], variant=variant)
                    records.append(record)
    return records, logs[0], logs[1]


def test_no_message_reveals_the_opponents_hidden_cards_or_blocks(tmp_path: Path) -> None:
    records, greedy_log, random_log = trio.run(play_logged_games, tmp_path)
    assert len(records) == 2 * sum(DEALS.values())
    assert all(r.reason == "battle" for r in records), [(r.reason, r.detail) for r in records]
    played = [a.action.split()[0] for r in records for a in r.actions]
    assert {"challenge", "refute", "decline", "leader", "deploy"} <= set(played)
    assert {r.variant for r in records} == {"battle", "siege"}
    for name, log in (("greedy", greedy_log), ("random", random_log)):
        games = split_games(log)
        assert len(games) == len(records)
        for record, lines in zip(records, games, strict=True):
            viewer = record.players.index(name)
            check_no_leak(record, viewer, lines)


def test_the_twin_check_catches_a_leak() -> None:
    """Sanity for the check above: an observation holding the opponent's hand differs
    from the twin's, and the id search finds a hidden id in a raw line."""
    state = GAME.random_opening("battle", 1, random.Random(3))
    secret = hidden_ids(state, 0)
    double = twin(state.scenario, 0, secret)
    assert state.observation(0) == double.observation(0)
    assert state.observation(1) != double.observation(1)  # the viewer's own cards differ
    leaked = state.observation(0) | {"opponent_hand": state.sides[1].hand}
    assert leaked != double.observation(0)
    line = json.dumps({"type": "go", "observation": leaked})
    assert id_pattern(secret).search(line)  # type: ignore[union-attr]


# --- a tournament of the battle bots ----------------------------------------------------


def test_round_robin_of_battle_bots_stores_swapped_pairs_and_reports(tmp_path: Path) -> None:
    toml = tmp_path / "battle.toml"
    text = """
name = "battle-rr"
game = "sekigahara"
tc = "5+0.1"
games_per_pairing = 4
concurrency = 1
seed = 5
[[bots]]
name = "random-a"
command = "builtin:random"
args = ["--seed", "1"]
[[bots]]
name = "random-b"
command = "builtin:random"
args = ["--seed", "2"]
[[bots]]
name = "greedy"
command = "builtin:battle-greedy"
"""
    toml.write_text(text)
    config = load_config(toml)
    directory = tmp_path / "results"
    tournament = Tournament(config, text, directory=directory, config_path=toml, workers=1)
    try:
        outcome = trio.run(tournament.run)
    finally:
        tournament.close()
    assert outcome.complete
    tasks = tournament.tasks
    assert len(tasks) == 3 * 2
    # No [openings] section: Sekigahara still deals every pair task its own opening.
    assert len({task.opening for task in tasks}) == len(tasks)

    with Store.open_existing(directory) as store:
        items = dict(store.items())
    assert set(items) == {key for task in tasks for key in task.game_keys}
    for task in tasks:
        first, second = (items[key] for key in task.game_keys)
        for record in (first, second):
            assert record.game == "sekigahara" and record.variant == "battle"
            assert record.reason == "battle", (record.reason, record.detail)
            assert record.reason not in FAULT_REASONS and record.faulty is None
            assert record.opening == task.opening
            assert set(record.outcome) >= {"winner", "winner_side", "impacts", "casualties"}
        assert first.players == [task.a, task.b]
        assert second.players == [task.b, task.a]
        # Same deal, same armies and hands: each bot attacked once with the same side.
        scenario = GAME.state_from_text(first.opening).scenario
        assert GAME.state_from_text(second.opening).scenario == scenario

    data = write_reports(directory)
    markdown = (directory / MARKDOWN_NAME).read_text()
    html = (directory / HTML_NAME).read_text()
    assert "## Standings" in markdown
    standings = markdown.split("## Standings", 1)[1].split("\n## ", 1)[0]
    for name in ("random-a", "random-b", "greedy"):
        assert f"| {name} |" in standings
        assert name in html
    assert "sekigahara" in markdown
    assert data is not None


# --- the greedy bot -------------------------------------------------------------------------


def play_in_process(variant: str, seed: int, greedy_seat: int) -> float:
    """One battle on a seeded deal: ``choose_action`` against a seeded random player,
    forced actions played without asking (as the referee does). Greedy's score."""
    rng = random.Random(seed)
    state = GAME.random_opening(variant, 1, rng)
    while not state.is_terminal():
        player, legal = state.current_player(), state.legal_actions()
        if len(legal) == 1:
            action = legal[0]
        elif player == greedy_seat:
            action = choose_action(state.observation(player), legal, rng)
            assert action in legal
        else:
            action = rng.choice(legal)
        state.apply_action(action)
    outcome = state.outcome()
    assert outcome is not None
    return outcome.returns[greedy_seat]


def test_greedy_beats_random_clearly_in_battles() -> None:
    score = sum(play_in_process("battle", seed, seat) for seed in range(20) for seat in (0, 1))
    assert score / 40 > 0.6, score


def test_greedy_wins_sieges_as_the_attacker() -> None:
    """A siege defender holds at most two blocks, so the attacker should nearly always win."""
    score = sum(play_in_process("siege", seed, 0) for seed in range(20))
    assert score / 20 >= 0.9, score


def battle(
    ishida: str, ishida_hand: str, tokugawa: str, tokugawa_hand: str, moves: str = ""
) -> SekigaharaState:
    """A hand-built battle (Ishida attacks) after ``moves`` (``;``-separated)."""

    def army(blocks: str, hand: str) -> str:
        return f"{','.join(blocks.split()) or '-'}/{','.join(hand.split()) or '-'}"

    return GAME.state_from_text(
        f"sekigahara battle attacker=ishida ishida={army(ishida, ishida_hand)}"
        f" tokugawa={army(tokugawa, tokugawa_hand)} moves={moves}"
    )


def decide(state: SekigaharaState) -> str:
    player = state.current_player()
    return choose_action(state.observation(player), state.legal_actions(), random.Random(0))


def test_greedy_takes_free_leaders_before_any_card() -> None:
    state = battle("b01:mori:1l b02:mori:3", "I20:mori:p", "b30:date:2", "T20:date:p")
    assert decide(state) == "leader b01"


def test_greedy_prefers_the_special_attack() -> None:
    # Sword with the gun: 1 + 2 = 3 (and +1 for the mori block already there) beats
    # the plain 2-mon block (2 + 1).
    state = battle(
        "b01:mori:1l b02:mori:2 b03:mori:1g",
        "I20:mori:s I21:mori:p",
        "b30:date:3",
        "T20:date:p",
        "leader b01;deploy T20 b30;pass",
    )
    assert decide(state) == "deploy I20 b03"


def test_greedy_refutes_whenever_it_can() -> None:
    state = battle(
        "b01:mori:3 b02:mori:2",
        "I20:mori:p I21:mori:p",
        "b30:date:3",
        "T01:loyalty T20:date:p",
        "deploy I20 b01;challenge T01",
    )
    assert state.phase == "refute"
    assert decide(state) == "refute I21"


def test_greedy_stops_when_ahead_and_the_opponent_has_stopped() -> None:
    state = battle("b01:mori:3 b02:mori:2", "I20:mori:p I21:mori:p", "b30:date:1", "T20:date:p")
    for action in ("deploy I20 b01", "pass", "deploy T20 b30", "pass", "stop"):
        state.apply_action(action)
    assert state.current_player() == 0 and state.sides[1].stopped
    assert decide(state) == "stop"


def test_greedy_challenges_a_big_unrefutable_deployment_and_not_a_safe_one() -> None:
    # Ishida deploys two blocks (3 and 1 + 1) with its last card, so it cannot refute;
    # turned, they would also bring Tokugawa 3 + 1: a swing of 9.
    big = battle(
        "b01:mori:3 b02:mori:1g b03:mori:1c",
        "I19:mori:d",
        "b30:date:2",
        "T01:loyalty T20:date:p",
        "deploy I19 b01,b03",
    )
    assert big.phase == "challenge" and big.current_player() == 1
    assert decide(big) == "challenge T01"
    # An any-card block is refuted by any card: the opponent still holds one.
    safe = battle(
        "b21:ishida:1l* b02:mori:2",
        "I19:mori:p I20:mori:p",
        "b30:date:2",
        "T01:loyalty T20:date:p",
        "deploy I19 b21",
    )
    assert safe.phase == "challenge"
    assert decide(safe) == "pass"


def test_battle_example_runs_quickly(tmp_path: Path) -> None:
    """``examples/battle.toml`` through the real ``arena run``: clean games, a report."""
    from click.testing import CliRunner

    from arena.cli import main

    example = Path(__file__).parent.parent / "examples" / "battle.toml"
    started = time.monotonic()
    result = CliRunner().invoke(main, ["run", str(example), "--results", str(tmp_path), "-q"])
    assert result.exit_code == 0, result.output
    assert time.monotonic() - started < 30
    with Store.open_existing(tmp_path / "battle") as store:
        records = list(store.records())
    assert len(records) == 2 * len(build_schedule(load_config(example)))
    assert all(r.reason == "battle" for r in records)
    assert (tmp_path / "battle" / MARKDOWN_NAME).exists()
