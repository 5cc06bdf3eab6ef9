"""The rules pages under ``docs/rules/`` agree with the rules core: every
``transcript`` block is replayed, every Sekigahara card and block id the documents
show is the one the published decks and default armies give it, the Sekigahara
session of protocol.md §7 is what the arena sends, and the repository names no
path outside itself."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from arena.games import State, get_game
from arena.games.sekigahara import default_scenario, load_toml
from arena.games.sekigahara.cards import Block, Card, deck, default_army
from arena.match.clock import Clock, TimeControl
from arena.match.wire import clock_info
from arena.protocol.messages import Go, NewGame, encode_line

ROOT = Path(__file__).resolve().parent.parent
DOCS = {
    "kamisado": ROOT / "docs/rules/kamisado.md",
    "sekigahara": ROOT / "docs/rules/sekigahara-battle.md",
}
BLOCK = re.compile(r"^```transcript\n(.*?)^```", re.S | re.M)


def transcripts(game: str) -> list[tuple[int, list[str]]]:
    """(line number of the block, its lines) for every transcript of ``game``'s page."""
    text = DOCS[game].read_text(encoding="utf-8")
    return [
        (text[: m.start()].count("\n") + 1, m.group(1).splitlines()) for m in BLOCK.finditer(text)
    ]


def lookup(obs: object, path: str) -> object:
    for key in path.split("."):
        assert isinstance(obs, dict), path
        obs = obs[key]
    return obs


def replay(game_name: str, lines: list[str]) -> State:
    """Play one transcript, asserting each ``position:``/``legal:``/``check:`` line.

    ``check: PATH = JSON`` compares a field of player 0's observation.
    """
    game = get_game(game_name)
    state: State | None = None
    for raw in lines:
        line = re.split(r"\s{2,}#", raw)[0].strip() if not raw.startswith("#") else ""
        if not line:
            continue
        where = f"at {raw!r}"
        key, _, value = line.partition(":")
        value = value.strip()
        if key == "position":
            if state is None:
                state = game.state_from_text(value)
            else:
                assert state.to_text() == value, where
        elif key == "legal":
            assert state is not None
            expected = [a.strip() for a in value.split(";") if a.strip()]
            assert state.legal_actions() == expected, where
        elif key == "check":
            assert state is not None
            path, _, want = value.partition(" = ")
            assert lookup(state.observation(0), path.strip()) == json.loads(want), where
        else:
            assert state is not None, "a transcript starts with 'position:'"
            assert line in state.legal_actions(), f"illegal {line!r} {where}: {state.to_text()}"
            state.apply_action(line)
    assert state is not None
    return state


@pytest.mark.parametrize("game", sorted(DOCS))
def test_every_transcript_replays_on_the_rules_core(game: str) -> None:
    blocks = transcripts(game)
    assert len(blocks) >= 4, f"{DOCS[game]} has too few worked examples"
    for number, lines in blocks:
        try:
            replay(game, lines)
        except AssertionError as exc:
            raise AssertionError(f"{DOCS[game].name}:{number}: {exc}") from None


def test_a_wrong_transcript_fails() -> None:
    with pytest.raises(AssertionError):
        replay(
            "kamisado",
            [
                "position: obvpyrgn/8/8/8/8/8/8/NGRYPVBO b - standard 0-0 1 -",
                "c1-a3",
                "legal: b8-c7",
            ],
        )
    with pytest.raises(AssertionError):
        replay(
            "kamisado", ["position: obvpyrgn/8/8/8/8/8/8/NGRYPVBO b - standard 0-0 1 -", "c1-c8"]
        )


def test_the_repository_names_no_path_outside_itself() -> None:
    files = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    me = Path(__file__).relative_to(ROOT).as_posix()
    offenders = []
    for name in files:
        path = ROOT / name
        if name != me and path.suffix in {".py", ".md", ".toml", ".txt", ".js", ".c", ".html"}:
            text = path.read_text(encoding="utf-8", errors="replace")
            offenders += [name] if re.search(r"/work/|\.\./shared/|shared/rules", text) else []
    assert offenders == []


def test_rules_pages_are_linked_from_protocol_and_readme() -> None:
    for doc in ("protocol.md", "README.md"):
        text = (ROOT / doc).read_text(encoding="utf-8")
        assert "docs/rules/kamisado.md" in text and "docs/rules/sekigahara-battle.md" in text, doc


# --- Sekigahara ids: one order, stated once, followed everywhere ---------------------

CARDS = {c.id: c for side in ("ishida", "tokugawa") for c in deck(side)}
BLOCKS = {b.id: b for side in ("ishida", "tokugawa") for b in default_army(side)}
ID_DOCS = [
    ROOT / "README.md",
    ROOT / "protocol.md",
    DOCS["sekigahara"],
    ROOT / "arena/games/sekigahara/worked-example.toml",
]
CARD_TOKEN = re.compile(r"\b([IT]\d\d):(loyalty|[a-z]+:[psd])\b")
BLOCK_TOKEN = re.compile(r"\b(b\d\d):([a-z]+:[1-4][gcl]?\*?)")
REVEALED = re.compile(r'"([IT]\d\d|b\d\d)": ?"([a-z]+(?::[a-z0-9]+\*?)?)"')
"""``revealed_cards`` / ``revealed_blocks`` entries in JSON: ``"I24": "mori:p"``."""


def _published(ident: str) -> str:
    """What a published id stands for, as a token without the id."""
    item: Block | Card = CARDS[ident] if ident[0] in "IT" else BLOCKS[ident]
    return item.describe()


def test_every_published_id_in_the_documents_is_what_the_decks_and_armies_make_it() -> None:
    seen = 0
    for path in ID_DOCS:
        text = path.read_text(encoding="utf-8")
        for pattern in (CARD_TOKEN, BLOCK_TOKEN, REVEALED):
            for m in pattern.finditer(text):
                ident, what = m.group(1), m.group(2)
                line = text[: m.start()].count("\n") + 1
                assert ident in CARDS or ident in BLOCKS, f"{path.name}:{line}: {m.group(0)}"
                assert _published(ident) == what, (
                    f"{path.name}:{line}: {m.group(0)} but {ident} is {_published(ident)}"
                )
                seen += 1
    assert seen > 100, "the pattern no longer finds the documents' ids"


def test_the_id_tables_are_the_decks_and_the_default_armies() -> None:
    """The rules page's two tables, id range by id range, against the rules core."""
    text = DOCS["sekigahara"].read_text(encoding="utf-8")
    section = text[text.index("### Card and block ids") : text.index("## The battle")]
    rows = [
        [c.strip().strip("`") for c in line.strip().strip("|").split("|")]
        for line in section.splitlines()
        if line.startswith("| ") and "---" not in line
    ]

    def ids(cell: str) -> list[str]:
        if "–" not in cell:
            return [cell] if cell else []
        first, last = (c.strip("` ") for c in cell.split("–"))
        prefix = first.rstrip("0123456789")
        return [f"{prefix}{i:02d}" for i in range(int(first[len(prefix) :]), int(last[1:]) + 1)]

    cards, blocks = {}, {}
    side = ""
    for row in rows:
        if row[0] in ("deck", "army"):
            header = row
            continue
        side = (row[0] or side).lower()
        if header[0] == "deck":
            cards.setdefault(side, []).extend(f"{i}:loyalty" for i in ids(row[1]))
            for kind, cell in zip("dsp", row[3:], strict=True):
                cards[side] += [f"{i}:{row[2]}:{kind}" for i in ids(cell)]
        else:
            for shape, cell in zip(["2", "3", "1g", "1c", "1l"], row[2:], strict=True):
                blocks.setdefault(side, []).append(f"{cell}:{row[1]}:{shape}")
    specials = {"ishida": "b21:ishida:1l*", "tokugawa": "b42:ii:4*"}
    for side in ("ishida", "tokugawa"):
        assert cards[side] == [c.token() for c in deck(side)], side
        assert [*blocks[side], specials[side]] == [b.token() for b in default_army(side)], side
        assert f"`{specials[side]}`" in section


def test_the_toml_examples_use_the_published_ids() -> None:
    """Scenario files give blocks and cards as tables too, which the token patterns miss."""
    texts = [(ROOT / "arena/games/sekigahara/worked-example.toml").read_text(encoding="utf-8")]
    protocol = (ROOT / "protocol.md").read_text(encoding="utf-8")
    texts += [
        b for b in re.findall(r"^```toml\n(.*?)^```", protocol, re.S | re.M) if "[ishida]" in b
    ]
    assert len(texts) == 2
    for text in texts:
        scenario = load_toml(text)
        for army in (scenario.ishida, scenario.tokugawa):
            for block in army.blocks:
                assert block.id not in BLOCKS or BLOCKS[block.id] == block, block
            for card in army.hand:
                assert CARDS[card.id] == card, card


def test_the_default_hands_the_documents_name_are_the_fixed_opening() -> None:
    want = [
        " ".join(c.id for c in army.hand)
        for army in (default_scenario().ishida, default_scenario().tokugawa)
    ]
    for path in (ROOT / "protocol.md", DOCS["sekigahara"]):
        text = re.sub(r"\s+", " ", path.read_text(encoding="utf-8"))
        named = re.findall(r"hands `([IT]\d\d(?: [IT]\d\d)*)` and `([IT]\d\d(?: [IT]\d\d)*)`", text)
        assert named == [tuple(want)], path.name


def test_the_sekigahara_session_of_protocol_section_7_is_what_the_arena_sends() -> None:
    """Its newgame and go lines, byte for byte, from the rules page's third example."""
    game = get_game("sekigahara")
    position = transcripts("sekigahara")[2][1][0].partition(":")[2].strip()
    text = (ROOT / "protocol.md").read_text(encoding="utf-8")
    section = text[text.index("### A Sekigahara example") : text.index("## 8. Minimal bots")]
    lines = [json.loads(line[2:]) for line in section.splitlines() if line.startswith("> {")]
    sent = [m for m in lines if m["type"] in ("newgame", "go")]
    assert [m["type"] for m in sent] == ["newgame", "go", "go"]
    state = game.state_from_text(position)
    clock = Clock(TimeControl.parse(sent[0]["time_control"]))
    first = sent[0]
    expected = NewGame(
        id=first["id"],
        game="sekigahara",
        variant="battle",
        player=1,
        players=first["players"],
        position=state.observation_text(1),
        time_control=first["time_control"],
    )
    assert json.loads(encode_line(expected)) == first
    for go in sent[1:]:
        replay = game.state_from_text(position)
        for action in go["history"]:
            replay.apply_action(action)
        expected_go = Go(
            id=go["id"],
            player=1,
            position=replay.observation_text(1),
            observation=replay.observation(1),
            history=replay.history(1),
            legal=replay.legal_actions(),
            clock=clock_info((clock, clock), 1),
        )
        assert json.loads(encode_line(expected_go)) == go
    answers = [json.loads(line[2:]) for line in section.splitlines() if line.startswith("< {")]
    last = game.state_from_text(position)
    for action in sent[-1]["history"]:
        last.apply_action(action)
    assert answers[-1]["action"] in last.legal_actions()


def test_the_kamisado_session_of_protocol_section_7_plays_legal_lines() -> None:
    """Its go (observation shortened there) lists the position's legal actions, and
    every info's PV and the answer are legal from that position."""
    game = get_game("kamisado")
    text = (ROOT / "protocol.md").read_text(encoding="utf-8")
    section = text[text.index("## 7. Example transcript") : text.index("### A Sekigahara example")]
    go = next(line for line in section.splitlines() if line.startswith('> {"type":"go","id":4'))
    position = re.search(r'"position":"([^"]+)"', go)
    legal = re.search(r'"legal":(\[[^\]]*\])', go)
    assert position is not None and legal is not None
    state = game.state_from_text(position[1])
    assert json.loads(legal[1]) == state.legal_actions()
    decoder = json.JSONDecoder()  # raw_decode: some lines end in a comment (← ...)
    answers = [
        decoder.raw_decode(line[2:])[0]
        for line in section.splitlines()
        if line.startswith('< {"type":')
    ]
    answer = next(m["action"] for m in answers if m["type"] == "action" and m["id"] == 4)
    infos = [m for m in answers if m["type"] == "info" and m["id"] == 4]
    assert any("playouts" in m for m in infos) and any("nodes" in m for m in infos)
    for message in infos:
        replay = state.clone()
        for action in message.get("pv", []):
            assert action in replay.legal_actions(), (message, action)
            replay.apply_action(action)
        if "pv" in message and "playouts" in message:
            assert message["depth"] == len(message["pv"])  # a Monte-Carlo depth: the PV's length
    assert answer in state.legal_actions()
