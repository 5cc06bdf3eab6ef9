"""The rules pages under ``docs/rules/`` agree with the rules core: every
``transcript`` block is replayed, and the repository names no path outside itself."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from arena.games import State, get_game

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
