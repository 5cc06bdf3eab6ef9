"""Replay frames: a stored game replayed through its rules core, one picture per ply.

A game record holds the opening and every action, not the positions between
them; the HTML report needs a picture per ply, so the game is replayed here
from ``record.opening`` with ``get_game(record.game)`` and the public
observation is taken after each action. Only observations are used (never the
game's internals), so any game gets a replay: its ``Show`` (``arena.games.show``)
makes each merged view a frame and names the picture that draws it (Kamisado a
board, Sekigahara its two armies, a game without pictures its fields in text).

Size matters (a tournament of 1000 games of 60 plies goes in one HTML file), so
frames are stored as differences: the first frame in full, then per ply only
the top-level keys that changed, with list growth (a game log) as an append.
``decode_frames`` is the inverse, mirrored by the JavaScript in the template.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from arena.games import GameError, get_game
from arena.games.base import State
from arena.games.show import Show
from arena.match.record import GameRecord

__all__ = [
    "Replay",
    "show_of",
    "decode_frames",
    "encode_frames",
    "game_view",
    "replay_frames",
    "replay_json",
]

DELETE = "-"
APPEND = "+"
"""Delta keys: ``"-"`` lists removed keys, ``"+name"`` appends items to list ``name``."""


@dataclass(frozen=True, slots=True)
class Replay:
    """The frames of one game: ``frames[0]`` is the opening, ``frames[k]`` follows
    action ``k``. ``error`` says why the replay stopped early (an unknown game, an
    opening or action the rules reject); then there are fewer frames than plies + 1.
    """

    frames: list[dict[str, Any]]
    error: str | None = None
    roles: tuple[str, str] = ("first", "second")
    """What the game calls player 0 and 1 (black/gold, attacker/defender)."""


def game_view(state: State) -> dict[str, Any]:
    """What the report shows of a state: what both players see, merged.

    A report is written after the game, so hiding nothing is right; a field both
    players see alike is shown once, a private one (a hand of cards) once per
    player, named ``field (player name)``. The viewer marker ``you`` is dropped.
    """
    names = state.player_names()
    views = [state.observation(0), state.observation(1)]
    merged: dict[str, Any] = {}
    for key in dict.fromkeys([*views[0], *views[1]]):
        if key == "you":
            continue
        a, b = views[0].get(key), views[1].get(key)
        if a == b:
            merged[key] = a
        else:
            merged[f"{key} ({names[0]})"] = a
            merged[f"{key} ({names[1]})"] = b
    return merged


def show_of(game: str) -> Show:
    """How ``game`` is drawn; the field listing for a game not installed here."""
    try:
        return get_game(game).show()
    except GameError:
        return Show()


def replay_frames(record: GameRecord) -> Replay:
    """Replay ``record`` from its opening; one frame (the game's compact view) per position.

    Never raises for a bad record: the report of a broken game must still be
    written, so what could be replayed is returned with the reason it stopped.
    """
    frame = show_of(record.game).frame
    try:
        state = get_game(record.game).state_from_text(record.opening)
    except GameError as exc:
        return Replay([], f"cannot read the opening: {exc}")
    roles = state.player_names()
    frames = [frame(game_view(state))]
    for ply, action in enumerate(record.actions, start=1):
        try:
            state.apply_action(action.action)
        except GameError as exc:
            error = f"ply {ply} ({action.action!r}) does not replay: {exc}"
            return Replay(frames, error, roles)
        frames.append(frame(game_view(state)))
    return Replay(frames, roles=roles)


def encode_frames(frames: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Full frames as deltas: the first in full, then the changes from the previous."""
    out: list[dict[str, Any]] = []
    previous: dict[str, Any] | None = None
    for frame in frames:
        if previous is None:
            out.append(dict(frame))
        else:
            delta: dict[str, Any] = {}
            for key, value in frame.items():
                if key in previous and previous[key] == value:
                    continue
                old = previous.get(key)
                if (
                    isinstance(old, list)
                    and isinstance(value, list)
                    and len(value) > len(old)
                    and value[: len(old)] == old
                ):
                    delta[APPEND + key] = value[len(old) :]
                else:
                    delta[key] = value
            removed = [key for key in previous if key not in frame]
            if removed:
                delta[DELETE] = removed
            out.append(delta)
        previous = frame
    return out


def decode_frames(deltas: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The full frames that ``encode_frames`` produced ``deltas`` from."""
    frames: list[dict[str, Any]] = []
    current: dict[str, Any] = {}
    for delta in deltas:
        current = dict(current)
        for key in delta.get(DELETE, ()):
            current.pop(key, None)
        for key, value in delta.items():
            if key == DELETE:
                continue
            if key.startswith(APPEND):
                name = key[len(APPEND) :]
                current[name] = [*current.get(name, []), *value]
            else:
                current[key] = value
        frames.append(current)
    return frames


def replay_json(record: GameRecord) -> dict[str, Any]:
    """The JSON-ready replay of one game that the HTML report embeds.

    ``a`` lists the actions as ``[text, ms, player]``, then ``1`` for a forced
    action the referee played without asking (else ``0``, present only when an
    ``info`` follows), then the bot's last ``info`` for that move (depth, score,
    pv, nodes or playouts, text) when it sent one; ``f`` the delta frames,
    ``e`` why the replay stopped early, if it did; ``k`` is the picture that
    draws the frames (``Show.picture``: ``"kamisado"`` a board, ``"sekigahara"``
    the battle, ``"text"`` the field listing); ``n`` the players' names and ``r``
    their roles.
    """
    replay = replay_frames(record)
    actions: list[list[Any]] = []
    for a in record.actions:
        entry: list[Any] = [a.action, a.ms, a.player]
        if a.forced or a.info:
            entry.append(1 if a.forced else 0)
        if a.info:
            entry.append(a.info)
        actions.append(entry)
    out: dict[str, Any] = {
        "k": show_of(record.game).picture,
        "n": list(record.players),
        "r": list(replay.roles),
        "a": actions,
        "f": encode_frames(replay.frames),
    }
    if replay.error:
        out["e"] = replay.error
    return out
