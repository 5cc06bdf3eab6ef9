"""The Sekigahara battle as people see it, drawn from its public ``observation``.

Two pictures (``arena.games.show``): compact replay frames that the page script
(``show.js``) draws as two armies (impact bars, fields, reserves, hands, the
cards shown), and a plain terminal listing for ``arena show``. Both read only
the documented observation fields (protocol.md), as a bot would, never the
rules core's internals.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text

from arena.games.show import PageAssets, Show, package_text

__all__ = ["SHOW", "battle_frame", "battle_page", "battle_terminal"]

ROLES = ("attacker", "defender")


def _own(view: dict[str, Any], key: str, role: str) -> Any:
    """A field that differs between the two players' views (a hand) appears in the
    merged report view as ``key (role)``; one both see alike, once as ``key``."""
    return view.get(f"{key} ({role})", view.get(key))


def battle_frame(view: dict[str, Any]) -> dict[str, Any]:
    """A merged Sekigahara view (``arena.report.replay.game_view``) as a compact frame.

    Short keys, one per thing that changes (``fa`` the attacker's field, ``ha``
    its hand...), because consecutive frames are stored as differences of
    top-level keys; ``cards`` only grows, so it is stored as appends.
    """
    frame: dict[str, Any] = {
        "v": view.get("variant"),
        "sd": [view["sides"][r] for r in ROLES],
        "ph": view.get("phase"),
        "m": view.get("to_move"),
        "im": [view["impact"][r] for r in ROLES],
        "st": [int(bool(view["stopped"][r])) for r in ROLES],
        "pe": view.get("pending"),
        "cards": [[cid, what] for cid, what in (view.get("revealed_cards") or {}).items()],
    }
    for role in ROLES:
        k = role[0]
        frame["f" + k] = [
            [item["block"], item["owner"][0], item["added"]] for item in view["field"][role]
        ]
        # A player's own hand and reserve, from its own view (the report hides nothing).
        hand = _own(view, "hand", role)
        reserve = _own(view, "reserve", role)
        frame["h" + k] = list(hand) if isinstance(hand, list) else None
        frame["r" + k] = list(reserve) if isinstance(reserve, list) else None
    outcome = {role: _own(view, "outcome", role) for role in ROLES}
    first = outcome["attacker"] or outcome["defender"]
    if first:
        frame["out"] = {
            "winner": first.get("winner"),
            "impacts": [first["impacts"][r] for r in ROLES],
            "casualties": [first["casualties"][r] for r in ROLES],
            # Each side's own view names its removed blocks; together, both lists.
            "removed": [list(((outcome[r] or {}).get("removed") or {}).get(r, [])) for r in ROLES],
        }
    else:
        frame["out"] = None
    return frame


def battle_terminal(observation: dict[str, Any]) -> Text:
    """One player's view as labelled lines (plain text: no markup, no emoji codes)."""
    obs = observation
    lines = [
        f"sekigahara {obs['variant']}: attacker {obs['sides']['attacker']}, "
        f"defender {obs['sides']['defender']}; you are the {obs['you']}",
        f"impact: attacker {obs['impact']['attacker']} - defender {obs['impact']['defender']}",
    ]
    if obs.get("outcome"):
        out = obs["outcome"]
        lines.append(
            f"over: {out['winner']} wins; casualties attacker {out['casualties']['attacker']}, "
            f"defender {out['casualties']['defender']}"
        )
    else:
        stopped = [r for r in ROLES if obs["stopped"][r]]
        lines.append(
            f"phase {obs['phase']}, {obs['to_move']} to act"
            + (f"; stopped: {', '.join(stopped)}" if stopped else "")
        )
    for role in ROLES:
        field = [
            f"{f['block']}{' (turned)' if f['owner'] != role else ''} +{f['added']}"
            for f in obs["field"][role]
        ]
        lines.append(f"{role} field: {', '.join(field) or 'empty'}")
    lines.append(f"your hand: {', '.join(obs['hand']) or 'empty'}")
    lines.append(f"your reserve: {', '.join(obs['reserve']) or 'empty'}")
    lines.append(
        f"opponent: {obs['opponent_hand']} cards in hand, "
        f"{obs['opponent_reserve']} blocks in reserve"
    )
    if obs.get("pending"):
        p = obs["pending"]
        lines.append(f"pending: {p['by']} deployed {','.join(p['blocks'])} (+{p['added']})")
    cards = [f"{c} {what}" for c, what in obs["revealed_cards"].items()]
    lines.append(f"cards shown: {', '.join(cards) or 'none'}")
    return Text("\n".join(lines))


def battle_page() -> PageAssets:
    """The script (``show.js``) that draws the armies of each frame, and its CSS."""
    return PageAssets(
        script=package_text(__package__, "show.js"),
        css=package_text(__package__, "show.css"),
    )


SHOW = Show("sekigahara", battle_terminal, battle_frame, battle_page)
"""The two armies: text in the terminal, impact bars and blocks in the browser."""
