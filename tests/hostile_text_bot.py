"""A bot whose every word is an attack on the operator's terminal (issue 22).

    python hostile_text_bot.py MODE

Its identity's name, author and version, its option names and choices, the PV
and text of its ``info`` lines and its stderr all carry :data:`PAYLOAD`: an OSC 0
window title, a CSI 2J screen clear, an OSC 52 clipboard write, a C1 CSI
(``\\x9b``) and a bidi override. It accepts any ``setoption``. Modes:

* ``play``: plays the first legal action, with an ``info`` and a stderr line;
* ``crash``: writes the payload to stderr at its first ``go`` and exits 3;
* ``badtag``: answers its first ``go`` with a message whose ``type`` is the
  payload (the decoder's error quotes that value).

Written without the SDK, so that it sends exactly these bytes.
"""

import json
import sys

PAYLOAD = "\x1b]0;owned\x07\x1b[2J\x1b]52;c;b3duZWQ=\x07\x9b31m\u202eevil"
MODE = sys.argv[1] if len(sys.argv) > 1 else "play"


def send(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")  # json.dumps writes \u001b escapes
    sys.stdout.flush()


for line in sys.stdin:
    msg = json.loads(line)
    kind = msg["type"]
    if kind == "hello":
        send(
            {
                "type": "identity",
                "id": msg["id"],
                "protocol": 1,
                "name": "hostile" + PAYLOAD,
                "author": "author" + PAYLOAD,
                "version": "1" + PAYLOAD,
                "games": ["kamisado"],
                "options": [
                    {"name": "Hash" + PAYLOAD, "type": "int", "default": 1, "min": 0, "max": 2},
                    {"name": "Style", "type": "choice", "choices": ["a" + PAYLOAD, "b"]},
                ],
            }
        )
    elif kind == "newgame":
        send({"type": "ready", "id": msg["id"]})
    elif kind == "ping":
        send({"type": "pong", "id": msg["id"]})
    elif kind == "go":
        print("thinking" + PAYLOAD, file=sys.stderr, flush=True)
        if MODE == "crash":
            sys.exit(3)
        if MODE == "badtag":
            send({"type": PAYLOAD, "id": msg["id"]})
            continue
        legal = msg["legal"]
        info = {"depth": 1, "pv": [legal[0], PAYLOAD], "text": "text" + PAYLOAD}
        send({"type": "info", "id": msg["id"], **info})
        send({"type": "action", "id": msg["id"], "action": legal[0]})
    elif kind == "quit":
        break
