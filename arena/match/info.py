"""What a game record keeps of a bot's ``info`` lines: bounded per action and per game.

The engine keeps the latest ``info`` lines of a decision within 64 KiB
(``arena/engine/bot.py``), and the record stores the last one with the action. A
bot sending one 64 KiB line before every action stored megabytes per game
(about 7 MB seen), in every record, export and report. So the stored ``info``
is cut to :data:`ACTION_BYTES` (its ``text`` shortened, then its ``pv``), and a
player's stored ``info`` to :data:`PLAYER_BYTES` in a game; past that only the
marker is kept. Whatever was cut says so: ``"cut": true``.
"""

from __future__ import annotations

from typing import Any

import msgspec

ACTION_BYTES = 4096
"""Most bytes of one action's stored ``info`` (its JSON)."""
PLAYER_BYTES = 32 << 10
"""Most bytes of one player's stored ``info`` in a game: 64 KiB a game for both."""
CUT = "cut"
_MARK = len(b',"cut":true')

__all__ = ["ACTION_BYTES", "CUT", "PLAYER_BYTES", "InfoBudget"]


def _size(info: dict[str, Any]) -> int:
    return len(msgspec.json.encode(info))


def _cut_text(info: dict[str, Any], room: int) -> None:
    """``info``'s ``text`` shortened until ``info`` fits ``room``: in proportion to its
    JSON (an escaped control character is six bytes of it), which each pass brings
    closer, then byte by byte of JSON over (a byte of text is a byte or more)."""
    for _ in range(4):
        text = info.get("text")
        if not isinstance(text, str) or not text or (over := _size(info) - room) <= 0:
            return
        raw = text.encode("utf-8")
        json = len(msgspec.json.encode(text))
        keep = min(len(raw) * (json - over) // json, len(raw) - 1)
        info["text"] = raw[: max(0, keep)].decode("utf-8", "ignore")
    text = info.get("text")
    if isinstance(text, str) and (over := _size(info) - room) > 0:
        raw = text.encode("utf-8")
        info["text"] = raw[: max(0, len(raw) - over)].decode("utf-8", "ignore")


def _fit(info: dict[str, Any], limit: int) -> dict[str, Any]:
    """``info`` within ``limit`` bytes, cut and marked if it had to be: its ``text`` to
    half the room at most, then the end of its ``pv``, then its ``text`` again."""
    if _size(info) <= limit:
        return info
    info = dict(info)
    room = limit - _MARK
    if isinstance(info.get("text"), str):
        _cut_text(info, _size(info) - len(info["text"].encode("utf-8")) + room // 2)
    pv = info.get("pv")
    if isinstance(pv, list) and _size(info) > room:
        left = room - _size({**info, "pv": []})
        kept = []
        for step in pv:
            left -= len(msgspec.json.encode(step)) + 1
            if left < 0:
                break
            kept.append(step)
        info["pv"] = kept
    _cut_text(info, room)
    if _size(info) > room:  # only numbers are left, and they fit any sane limit
        info = {}
    info[CUT] = True
    return info


class InfoBudget:
    """One game's account of the ``info`` it stored, per player."""

    def __init__(self, players: int = 2) -> None:
        self.left = [PLAYER_BYTES] * players

    def keep(self, player: int, info: dict[str, Any] | None) -> dict[str, Any] | None:
        """``info`` as the record stores it for ``player``: cut to fit (or only marked)."""
        if not info:
            return info
        dropped = {"dropped": info["dropped"]} if "dropped" in info else {}
        info = _fit(info, min(ACTION_BYTES, max(self.left[player], 0)))
        if self.left[player] <= 0 or (info.get(CUT) and len(info) == 1):
            info = {CUT: True, **dropped}
        self.left[player] -= _size(info)
        return info
