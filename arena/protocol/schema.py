"""The protocol as JSON Schema, generated from the arena's own msgspec types.

``docs/schema/`` publishes what this module builds, so a bot author can generate
or validate messages in any language without reading Python; a test checks the
files are up to date (``python -m arena.protocol.schema`` rewrites them) and that real
messages validate against them.

Two adjustments to ``msgspec.json.schema``'s output, both to say what the wire
really carries: the arena writes every field of its messages (so in the
arena-to-bot schema every property is required, although the Python types have
defaults), and each file gets a ``$schema`` and a ``title``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import msgspec

from arena.games import game_names, get_game
from arena.protocol.messages import ArenaMessage, BotMessage

DIALECT = "https://json-schema.org/draft/2020-12/schema"
DEFAULT_DIR = Path(__file__).resolve().parents[2] / "docs" / "schema"


def _all_required(schema: dict[str, Any]) -> dict[str, Any]:
    for definition in schema.get("$defs", {}).values():
        if definition.get("type") == "object" and "properties" in definition:
            definition["required"] = list(definition["properties"])
    return schema


def _file(title: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"$schema": DIALECT, "title": title, **schema}


def schemas() -> dict[str, dict[str, Any]]:
    """File name -> schema, for every file of ``docs/schema/``."""
    out = {
        "arena-to-bot.json": _file(
            "A line the arena writes to a bot (protocol.md §2)",
            _all_required(msgspec.json.schema(ArenaMessage)),
        ),
        "bot-to-arena.json": _file(
            "A line a bot writes to the arena (protocol.md §2); optional fields accept null",
            msgspec.json.schema(BotMessage),
        ),
    }
    for name in game_names():
        kind = get_game(name).observation_type
        if kind is not None:
            out[f"{name}-observation.json"] = _file(
                f"The observation object of a {name} go request",
                _all_required(msgspec.json.schema(kind)),
            )
    return out


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def stale(directory: Path = DEFAULT_DIR) -> list[str]:
    """Names of the files of ``directory`` that differ from :func:`schemas` (or are missing)."""
    out = []
    for name, schema in schemas().items():
        path = directory / name
        if not path.is_file() or path.read_text(encoding="utf-8") != render(schema):
            out.append(name)
    return out


def main(argv: list[str]) -> int:
    """``python -m arena.protocol.schema [DIR]``: write the schema files (default docs/schema)."""
    directory = Path(argv[0]) if argv else DEFAULT_DIR
    directory.mkdir(parents=True, exist_ok=True)
    for name, schema in schemas().items():
        (directory / name).write_text(render(schema), encoding="utf-8")
        print(f"wrote {directory / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
