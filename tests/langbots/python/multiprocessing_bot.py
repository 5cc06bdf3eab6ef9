"""A Kamisado Arena bot in Python that thinks in a ``multiprocessing`` pool of two
processes, guarded by a lock (a POSIX semaphore in /dev/shm); written from
protocol.md, it does not import the arena."""

import json
import multiprocessing
import random
import sys


def score(action: str) -> float:
    return random.Random(action).random()


def main() -> None:
    lock = multiprocessing.Lock()
    with multiprocessing.get_context("fork").Pool(2) as pool:
        for line in sys.stdin:
            if not line.strip():
                continue
            msg = json.loads(line)
            kind = msg["type"]
            if kind == "hello":
                reply = {"type": "identity", "id": msg["id"], "protocol": 1}
                reply |= {"name": "langbot-multiprocessing", "author": "tests", "version": "1"}
                reply["games"] = ["kamisado"]
            elif kind == "newgame":
                reply = {"type": "ready", "id": msg["id"]}
            elif kind == "ping":
                reply = {"type": "pong", "id": msg["id"]}
            elif kind == "go":
                with lock:
                    scores = pool.map(score, msg["legal"])
                best = max(range(len(scores)), key=scores.__getitem__)
                reply = {"type": "action", "id": msg["id"], "action": msg["legal"][best]}
            elif kind == "quit":
                break
            else:
                continue
            print(json.dumps(reply, separators=(",", ":")), flush=True)


if __name__ == "__main__":
    main()
