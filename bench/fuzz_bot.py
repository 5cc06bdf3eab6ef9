"""A protocol bot that answers every ``go`` after a burst of fuzzed lines.

    python bench/fuzz_bot.py SEED STATE_DIR [HOSTILE_RATE]

Before each action it writes 20-300 *benign* lines the arena must accept
without a fault: ``info`` lines with unknown fields of random JSON (nested up to
the protocol's 32 levels), odd Unicode, escapes, extreme floats, integers beyond
64 bits, null fields, blank lines and ``\\r\\n`` endings. With probability
HOSTILE_RATE per decision it then writes one *hostile* line instead of its
action (garbage bytes, invalid UTF-8, deep nesting, a number beyond a double,
wrong types, wrong id, truncated JSON, an illegal action, a line over the
length limit), announced on stderr first as ``hostile: KIND`` so the record's
stderr tail says why the bot lost.

After every decision it rewrites ``STATE_DIR/<pid>-<token>`` with its counts,
``benign hostile``, which ``bench/fuzz.py`` sums (the arena kills faulted bots).
"""

import json
import os
import random
import sys

seed, state_dir = int(sys.argv[1]), sys.argv[2]
hostile_rate = float(sys.argv[3]) if len(sys.argv) > 3 else 0.05
# In the arena's sandbox every bot is pid 2 (its own PID namespace): name the
# state file and vary the stream with a random token instead.
token = int.from_bytes(os.urandom(4), "big")
rng = random.Random(seed * 100_003 + token)
out = sys.stdout.buffer
counts = [0, 0]
MAX_LINE = 1 << 20
WEIRD = ["", "é", "\u2028", "\u0000", "\\", '"', "[{", "}]", "\ud7ff", "\U0001f600", "\t\n"]


def value(depth: int):  # noqa: ANN201
    kind = rng.randrange(9 if depth > 0 else 6)
    if kind == 0:
        return None
    if kind == 1:
        return rng.random() < 0.5
    if kind == 2:
        return rng.randint(-(2**63), 2**63 - 1)
    if kind == 3:
        return rng.choice([0.0, -0.0, 1e308, -1e-308, 5e-324, rng.uniform(-1e9, 1e9)])
    if kind in (4, 5):
        return "".join(rng.choice(WEIRD) for _ in range(rng.randrange(8)))
    if kind in (6, 7):
        return [value(depth - 1) for _ in range(rng.randrange(4))]
    return {rng.choice(WEIRD) + str(i): value(depth - 1) for i in range(rng.randrange(4))}


def nested(depth: int):  # noqa: ANN201
    inner = value(0)
    for _ in range(depth):
        inner = [inner] if rng.random() < 0.5 else {"k": inner}
    return inner


def benign(msg_id: int, legal: list[str]) -> bytes:
    kind = rng.randrange(6)
    if kind == 0:
        return b"\n" if rng.random() < 0.5 else b"   \r\n"
    info: dict = {"type": "info", "id": msg_id}
    if rng.random() < 0.7:
        info["depth"] = rng.choice([None, 0, 1, -5, 2**62, 10**30, -(10**40)])
        info["score"] = rng.choice([None, 0.5, -1e308, 1e-300, 7])
        info["nodes"] = rng.choice([None, 0, 2**63 - 1, -(2**63)])
        if kind % 2:  # a Monte-Carlo bot's count instead (no extra draw: same stream)
            info["playouts"] = info.pop("nodes")
        info["pv"] = rng.choice([None, [], rng.sample(legal, min(3, len(legal)))])
        info["text"] = rng.choice([None, "".join(rng.choice(WEIRD) for _ in range(20))])
    if kind >= 2:  # an unknown field, which must be skipped, nested within the bound
        info["x" + rng.choice(WEIRD)] = nested(rng.randrange(30)) if kind == 5 else value(4)
    line = json.dumps(info, ensure_ascii=rng.random() < 0.5)
    if rng.random() < 0.2:
        line = line.replace(",", ", ").replace(":", " : ")
    return line.encode("utf-8", "surrogatepass" if kind == 4 else "strict") + (
        b"\r\n" if rng.random() < 0.1 else b"\n"
    )


def hostile(msg_id: int) -> tuple[str, bytes]:
    kind = rng.choice(
        [
            "garbage",
            "utf8",
            "deep",
            "huge_float",
            "type",
            "id",
            "truncated",
            "illegal",
            "long",
            "deep_string",
            "float_id",
            "no_type",
        ]
    )
    if kind == "garbage":
        body = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 200))).replace(b"\n", b"")
        return kind, (body or b"x") + b"\n"
    if kind == "utf8":
        return kind, b'{"type":"info","id":%d,"text":"\xff\xfe"}\n' % msg_id
    if kind == "deep":
        n = rng.choice([33, 1000, 100_000])
        return kind, b'{"type":"info","id":%d,"x":%s%s}\n' % (msg_id, b"[" * n, b"]" * n)
    if kind == "huge_float":  # out of a double's range (a huge integer is valid JSON)
        return kind, b'{"type":"info","id":%d,"score":1e400}\n' % msg_id
    if kind == "type":
        return kind, b'{"type":"action","id":%d,"action":["a"]}\n' % msg_id
    if kind == "id":
        return kind, b'{"type":"action","id":%d,"action":"x"}\n' % (msg_id + 1)
    if kind == "truncated":
        return kind, b'{"type":"action","id":%d,"act\n' % msg_id
    if kind == "illegal":
        return kind, b'{"type":"action","id":%d,"action":"z9-z9"}\n' % msg_id
    if kind == "long":
        return kind, b"x" * (MAX_LINE + 10) + b"\n"
    if kind == "deep_string":  # brackets inside a string are not nesting: benign really,
        text = "[" * 5000  # but followed by a wrong id to end the game
        return kind, json.dumps({"type": "info", "id": msg_id + 1, "text": text}).encode() + b"\n"
    if kind == "float_id":
        return kind, b'{"type":"action","id":%d.5,"action":"x"}\n' % msg_id
    return kind, b'{"id":%d,"action":"x"}\n' % msg_id


def send(data: bytes) -> None:
    out.write(data)
    out.flush()


def save() -> None:
    with open(os.path.join(state_dir, f"{os.getpid()}-{token:08x}"), "w") as f:
        f.write(f"{counts[0]} {counts[1]}\n")


for raw in sys.stdin:
    msg = json.loads(raw)
    t = msg["type"]
    if t == "hello":
        send(
            json.dumps(
                {
                    "type": "identity",
                    "id": msg["id"],
                    "protocol": 1,
                    "name": "fuzz",
                    "games": ["kamisado", "sekigahara"],
                }
            ).encode()
            + b"\n"
        )
    elif t == "newgame":
        send(json.dumps({"type": "ready", "id": msg["id"]}).encode() + b"\n")
    elif t == "ping":
        send(json.dumps({"type": "pong", "id": msg["id"]}).encode() + b"\n")
    elif t == "quit":
        break
    elif t == "go":
        burst = b"".join(benign(msg["id"], msg["legal"]) for _ in range(rng.randrange(20, 300)))
        counts[0] += burst.count(b"\n")
        send(burst)
        if rng.random() < hostile_rate:
            kind, line = hostile(msg["id"])
            counts[1] += 1
            save()
            print(f"hostile: {kind}", file=sys.stderr, flush=True)
            send(line)
            continue  # the arena ends the game; wait for what comes next
        action = rng.choice(msg["legal"])
        send(json.dumps({"type": "action", "id": msg["id"], "action": action}).encode() + b"\n")
        save()
save()
