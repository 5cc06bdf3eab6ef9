"""How the toy race is drawn: lanes of cells, in the terminal and in the browser."""

from __future__ import annotations

from typing import Any

from rich.text import Text

from arena.games.show import PageAssets, Show, package_text

COLOURS = {"red": "#d63a2f", "blue": "#2f6fd6"}


def terminal(observation: dict[str, Any]) -> Text:
    text = Text()
    for name, cell in observation["lanes"].items():
        lane = "".join("@" if i == cell else "." for i in range(observation["goal"] + 1))
        text.append(f"{name:>4} |{lane}|\n", style=COLOURS[name])
    text.append(f"{observation['to_move']} to move")
    return text


def frame(view: dict[str, Any]) -> dict[str, Any]:
    return {
        "l": [view["lanes"]["red"], view["lanes"]["blue"]],
        "g": view["goal"],
        "m": view["to_move"],
    }


def page() -> PageAssets:
    return PageAssets(
        script=package_text(__package__, "show.js"),
        css=".toy-track rect { stroke: #444; }\n",
        data={"toy-colours": COLOURS},
    )


SHOW = Show("toy", terminal, frame, page)
