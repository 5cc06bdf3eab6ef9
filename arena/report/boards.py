"""Board pictures drawn from a state's public ``observation``, never its internals."""

from __future__ import annotations

from typing import Any

from rich.text import Text

# Square colours of the Kamisado board, rank 8 first (as in the rules file).
KAMISADO_ROWS = (
    "orange blue purple pink yellow red green brown",
    "red orange pink green blue yellow brown purple",
    "green pink orange red purple brown yellow blue",
    "pink purple blue orange brown green red yellow",
    "yellow red green brown orange blue purple pink",
    "blue yellow brown purple red orange pink green",
    "purple brown yellow blue green pink orange red",
    "brown green red yellow pink purple blue orange",
)
# Colour initials, distinct for colour-blind readers (V: purple/violet, N: brown).
INITIALS = {
    "orange": "O", "blue": "B", "purple": "V", "pink": "P",
    "yellow": "Y", "red": "R", "green": "G", "brown": "N",
}  # fmt: skip
HEX = {
    "orange": "#f28c28", "blue": "#2f6fd6", "purple": "#7b3fa0", "pink": "#f19cbb",
    "yellow": "#f4d03f", "red": "#d63a2f", "green": "#3c9a4a", "brown": "#7b4a26",
}  # fmt: skip


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


def render_terminal(game: str, observation: dict[str, Any]) -> Text:
    """The terminal picture of a position for ``game``, or its fields as text."""
    if game == "kamisado":
        return kamisado_terminal(observation)
    return Text("\n".join(f"{key}: {value}" for key, value in observation.items()))
