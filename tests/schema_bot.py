"""A bot written from the published JSON Schemas alone (``docs/schema/``).

    python schema_bot.py SCHEMA_DIR [GAMES]

It imports nothing of the arena. Every line it receives is validated against
``arena-to-bot.json`` (and a ``go``'s observation against the game's
``<game>-observation.json``); every answer is *generated* from
``bot-to-arena.json``: the ``type`` from the tag's enum, each required property
from the request (``id``, the offered ``game``, ``legal[0]``), and every
optional property of ``identity`` and ``info`` sent as ``null``, which the
protocol accepts (``GAMES``, comma-separated, replaces the declared games, to
keep check-bot's game stage short). Before a ``go``'s answer it sends such an ``info``. A line that
fails its schema ends the bot with status 3 and the reason on stderr, so the
arena records it.
"""

import json
import sys
from pathlib import Path

import jsonschema

DIR = Path(sys.argv[1])
load = lambda name: json.loads((DIR / name).read_text())  # noqa: E731
IN, OUT = load("arena-to-bot.json"), load("bot-to-arena.json")
incoming = jsonschema.Draft202012Validator(IN)
outgoing = jsonschema.Draft202012Validator(OUT)
ANSWER = {"hello": "identity", "newgame": "ready", "go": "action", "ping": "pong"}
game = None


def definition(tag):
    ref = OUT["discriminator"]["mapping"][tag]
    return OUT["$defs"][ref.rsplit("/", 1)[1]]


def generate(tag, request):
    """A message of kind ``tag``: required fields filled, optional ones null."""
    known = {
        "id": request["id"],
        "protocol": request.get("protocol"),
        "name": "schema-bot",
        "games": sys.argv[2].split(",") if len(sys.argv) > 2 else [request.get("game")],
        "action": (request.get("legal") or [None])[0],
    }
    schema = definition(tag)
    msg = {}
    for prop, spec in schema["properties"].items():
        if "enum" in spec:
            msg[prop] = spec["enum"][0]
        elif prop in schema.get("required", []):
            msg[prop] = known[prop]
        else:
            msg[prop] = None
    outgoing.validate(msg)
    return msg


def fail(why):
    sys.stderr.write(f"schema violation: {why}\n")
    sys.exit(3)


for line in sys.stdin:
    if not line.strip():
        continue
    msg = json.loads(line)
    try:
        incoming.validate(msg)
        if msg["type"] == "hello":
            game = msg["game"]
        if msg["type"] == "go":
            jsonschema.validate(msg["observation"], load(f"{game}-observation.json"))
    except jsonschema.ValidationError as exc:
        fail(f"{msg.get('type')}: {exc.message} at {list(exc.absolute_path)}")
    if msg["type"] == "quit":
        break
    tag = ANSWER.get(msg["type"])
    if tag is None:
        continue
    if tag == "action":
        sys.stdout.write(json.dumps(generate("info", msg)) + "\n")
    sys.stdout.write(json.dumps(generate(tag, msg)) + "\n")
    sys.stdout.flush()
