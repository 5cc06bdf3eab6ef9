"""A bot as an outside author writes one: plain JSON, no arena imports.

    python author_bot.py [--name N] [--games G,...] [--options JSON] [--log FILE]
                         [--late-free-choice]

Plays the first legal action. Its ``identity`` sends ``"author": null`` and
``"version": null`` (optional fields, so no fault). ``--options`` is the JSON
list of option declarations to put in ``identity``; ``--log`` appends every
line received, so a test can see the ``setoption``/``newgame``/``go`` sequence.

``--late-free-choice`` is the bug check-bot's single requests cannot see: the
bot answers nonsense when it must open a later Kamisado round with a free
choice of tower (round 2 or later, no required colour), as a bot with a
fixed-size move list would after a regroup.
"""

import argparse
import json
import sys

parser = argparse.ArgumentParser()
parser.add_argument("--name", default="author-bot")
parser.add_argument("--games", default="kamisado,sekigahara")
parser.add_argument("--options", default=None)
parser.add_argument("--log", default=None)
parser.add_argument("--late-free-choice", action="store_true")
args = parser.parse_args()


def send(obj):
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def choose(msg):
    obs = msg["observation"]
    late_free = obs.get("round", 1) > 1 and obs.get("required_colour", "x") is None
    if args.late_free_choice and late_free and obs.get("phase") == "play":
        return "z9-z9"
    return msg["legal"][0]


for line in sys.stdin:
    if not line.strip():
        continue
    if args.log:
        with open(args.log, "a") as f:
            f.write(line)
    msg = json.loads(line)
    kind = msg["type"]
    if kind == "hello":
        identity = {
            "type": "identity",
            "id": msg["id"],
            "protocol": 1,
            "name": args.name,
            "author": None,
            "version": None,
            "games": args.games.split(","),
        }
        if args.options is not None:
            identity["options"] = json.loads(args.options)
        send(identity)
    elif kind == "newgame":
        send({"type": "ready", "id": msg["id"]})
    elif kind == "ping":
        send({"type": "pong", "id": msg["id"]})
    elif kind == "go":
        send({"type": "action", "id": msg["id"], "action": choose(msg)})
    elif kind == "quit":
        break
