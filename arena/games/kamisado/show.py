"""Kamisado as people see it: the board in a terminal, as SVG and as replay frames.

Drawn from a state's public ``observation`` (``arena.games.show``), never from
the rules core's internals; the board's colours come from the rules' own tables.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text

from arena.games.kamisado.board import COLOUR_LETTERS, COLOURS, SQUARE_COLOUR
from arena.games.show import PageAssets, Show, package_text

# The board's square colours and the colour letters are facts of the game, not
# of a position: take them from the rules core's public tables, rank 8 first.
KAMISADO_ROWS = tuple(
    " ".join(COLOURS[SQUARE_COLOUR[8 * r + f]] for f in range(8)) for r in range(7, -1, -1)
)
# Colour initials, distinct for colour-blind readers (V: purple/violet, N: brown).
INITIALS = dict(zip(COLOURS, COLOUR_LETTERS, strict=True))
# Aligned by hand: a table reads better in rows.
# fmt: off
HEX = {
    "orange": "#f28c28", "blue": "#2f6fd6", "purple": "#7b3fa0", "pink": "#f19cbb",
    "yellow": "#f4d03f", "red": "#d63a2f", "green": "#3c9a4a", "brown": "#7b4a26",
}
# fmt: on


def kamisado_terminal(observation: dict[str, Any]) -> Text:
    """The board in colour, each square also labelled, so it reads without colour.

    A square shows its colour initial in lower case when empty; a tower shows
    ``B``/``G`` for its owner, its colour initial, and ``+`` per Sumo rank.
    """
    towers = {t["square"]: t for t in observation["towers"]}
    text = Text()
    for i, row in enumerate(KAMISADO_ROWS):
        r = 8 - i
        text.append(f"{r} ")
        for f, colour in enumerate(row.split()):
            square = f"{'abcdefgh'[f]}{r}"
            style = f"on {HEX[colour]}"
            tower = towers.get(square)
            if tower is None:
                text.append(f"  {INITIALS[colour].lower()}  ", style=f"{style} black")
                continue
            owner = "B" if tower["owner"] == "black" else "G"
            label = f"{owner}{INITIALS[tower['colour']]}{'+' * tower['rank']}".center(5)
            fg = "bold white on black" if owner == "B" else "bold black on #ffd700"
            text.append(label, style=fg)
        text.append("\n")
    text.append("    a    b    c    d    e    f    g    h\n")
    req = observation.get("required_colour")
    text.append(
        f"{observation['match']} match, round {observation['round']}, "
        f"score black {observation['scores']['black']} - gold {observation['scores']['gold']} "
        f"(target {observation['target']}); "
    )
    if observation["phase"] == "over":
        text.append("match over")
    elif observation["phase"] == "regroup":
        text.append(f"{observation['to_move']} chooses the regroup (left/right)")
    else:
        text.append(f"{observation['to_move']} to move, {req or 'any'} tower")
    return text


# -- Kamisado as SVG and as compact replay frames ---------------------------------------
#
# The HTML report replays games in the browser. Its frames are observations in a
# compact form (one short string per tower, short keys), and the browser draws
# the towers with the same geometry as ``kamisado_svg`` below (``show.js``), on a
# board background drawn once here. Keeping the geometry in ``KAMISADO_SVG`` lets
# the Python and JavaScript pictures agree.

KAMISADO_SVG = {"square": 40, "margin": 18}
"""Board geometry in SVG units: square size and the margin for coordinates."""

OWNER_FILL = {"black": "#111111", "gold": "#d4af37"}
OWNER_TEXT = {"black": "#ffffff", "gold": "#111111"}
_COLOUR_OF_INITIAL = {v: k for k, v in INITIALS.items()}


def kamisado_frame(observation: dict[str, Any]) -> dict[str, Any]:
    """A Kamisado observation as a flat dict with short keys, for replay frames.

    Why flat: consecutive frames are stored as differences of top-level keys, and
    with one key per tower (``"bR"`` is Black's red tower, value ``"c5+"`` for a
    Sumo on c5) a move changes one or two keys instead of the whole tower list.
    """
    frame: dict[str, Any] = {}
    for t in observation["towers"]:
        frame[t["owner"][0] + INITIALS[t["colour"]]] = t["square"] + "+" * t["rank"]
    # Side and colour by initial: they change every ply, so every byte counts.
    frame["m"] = observation["to_move"][0]
    required = observation["required_colour"]
    frame["c"] = None if required is None else INITIALS[required]
    frame["ph"] = observation["phase"]
    frame["s"] = [observation["scores"]["black"], observation["scores"]["gold"]]
    frame["r"] = observation["round"]
    frame["x"] = observation["match"]
    frame["g"] = observation["target"]
    return frame


def kamisado_unframe(frame: dict[str, Any]) -> dict[str, Any]:
    """The observation (without the viewer's ``you``) that ``kamisado_frame`` encoded."""
    towers = []
    for key, value in frame.items():
        if len(key) == 2 and key[0] in "bg" and key[1] in _COLOUR_OF_INITIAL:
            square = value.rstrip("+")
            towers.append(
                {
                    "square": square,
                    "owner": "black" if key[0] == "b" else "gold",
                    "colour": _COLOUR_OF_INITIAL[key[1]],
                    "rank": len(value) - len(square),
                }
            )
    return {
        "towers": towers,
        "to_move": "black" if frame["m"] == "b" else "gold",
        "required_colour": None if frame["c"] is None else _COLOUR_OF_INITIAL[frame["c"]],
        "phase": frame["ph"],
        "match": frame["x"],
        "target": frame["g"],
        "scores": {"black": frame["s"][0], "gold": frame["s"][1]},
        "round": frame["r"],
    }


def _square_xy(square: str) -> tuple[int, int]:
    size, margin = KAMISADO_SVG["square"], KAMISADO_SVG["margin"]
    file, rank = "abcdefgh".index(square[0]), int(square[1:])
    return margin + file * size, (8 - rank) * size


def kamisado_tower_svg(tower: dict[str, Any]) -> str:
    """One tower: a disc in its owner's colour with a ring of its own colour, its
    colour initial (readable without colour vision) and one dot per Sumo rank."""
    size = KAMISADO_SVG["square"]
    x, y = _square_xy(tower["square"])
    cx, cy = x + size / 2, y + size / 2
    owner, colour = tower["owner"], tower["colour"]
    parts = [
        f'<g class="tower" data-square="{tower["square"]}" data-owner="{owner}" '
        f'data-colour="{colour}" data-rank="{tower["rank"]}">',
        f'<circle cx="{cx}" cy="{cy}" r="{size * 0.42}" fill="{OWNER_FILL[owner]}" '
        'stroke="#fff" stroke-width="1"/>',
        f'<circle cx="{cx}" cy="{cy}" r="{size * 0.27}" fill="{HEX[colour]}"/>',
        f'<text x="{cx}" y="{cy + 4}" text-anchor="middle" font-size="11" '
        f'font-weight="bold" fill="{OWNER_TEXT[owner]}">{INITIALS[colour]}</text>',
    ]
    for k in range(tower["rank"]):
        parts.append(
            f'<circle cx="{x + 6 + 6 * k}" cy="{y + 6}" r="2.5" fill="#fff" stroke="#000" '
            'stroke-width="0.8"/>'
        )
    parts.append("</g>")
    return "".join(parts)


def kamisado_svg(observation: dict[str, Any] | None = None, *, css_class: str = "board") -> str:
    """The board as an inline SVG, with the towers of ``observation`` if given.

    Without an observation it is the empty board that the HTML replay clones
    and fills with towers in the browser; the towers group has the class
    ``towers`` so the script knows where to draw.
    """
    size, margin = KAMISADO_SVG["square"], KAMISADO_SVG["margin"]
    width, height = margin + 8 * size, 8 * size + margin
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" class="{css_class}" '
        f'viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img">'
    ]
    for i, row in enumerate(KAMISADO_ROWS):
        for f, colour in enumerate(row.split()):
            x, y = margin + f * size, i * size
            parts.append(
                f'<rect x="{x}" y="{y}" width="{size}" height="{size}" fill="{HEX[colour]}"/>'
            )
        parts.append(
            f'<text x="{margin / 2}" y="{i * size + size / 2 + 4}" text-anchor="middle" '
            f'font-size="11">{8 - i}</text>'
        )
    for f in range(8):
        parts.append(
            f'<text x="{margin + f * size + size / 2}" y="{8 * size + margin - 5}" '
            f'text-anchor="middle" font-size="11">{"abcdefgh"[f]}</text>'
        )
    parts.append('<g class="towers">')
    if observation is not None:
        parts.extend(kamisado_tower_svg(t) for t in observation["towers"])
    parts.append("</g></svg>")
    return "".join(parts)


def kamisado_page() -> PageAssets:
    """What a page needs to draw boards: the empty board its script (``show.js``)
    clones for each replay, and the geometry and colours it draws the towers with."""
    style = {
        **KAMISADO_SVG,
        "hex": HEX,
        "colours": {initial: colour for colour, initial in INITIALS.items()},
        "owner_fill": OWNER_FILL,
        "owner_text": OWNER_TEXT,
    }
    return PageAssets(
        script=package_text(__package__, "show.js"),
        css=package_text(__package__, "show.css"),
        templates={"kamisado-board": kamisado_svg()},
        data={"kamisado-style": style},
    )


SHOW = Show("kamisado", kamisado_terminal, kamisado_frame, kamisado_page)
"""The board: coloured squares and towers, in the terminal and in the browser."""
