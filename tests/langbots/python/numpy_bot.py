"""A Kamisado Arena bot in Python that needs numpy, run by its own virtualenv's
interpreter (written from protocol.md; it does not import the arena)."""

import json
import sys

import numpy as np

rng = np.random.default_rng()
for line in sys.stdin:
    if not line.strip():
        continue
    msg = json.loads(line)
    kind = msg["type"]
    if kind == "hello":
        reply = {"type": "identity", "id": msg["id"], "protocol": 1, "name": "langbot-numpy"}
        reply |= {"author": "tests", "version": np.__version__, "games": ["kamisado"]}
    elif kind == "newgame":
        reply = {"type": "ready", "id": msg["id"]}
    elif kind == "ping":
        reply = {"type": "pong", "id": msg["id"]}
    elif kind == "go":
        scores = rng.random(len(msg["legal"]))
        reply = {"type": "action", "id": msg["id"], "action": msg["legal"][int(np.argmax(scores))]}
    elif kind == "quit":
        break
    else:
        continue
    print(json.dumps(reply, separators=(",", ":")), flush=True)
