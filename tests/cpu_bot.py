"""A protocol bot for the fair-compute tests (``tests/test_cpu.py``), one behaviour per mode.

    python cpu_bot.py MODE [N]

Every mode answers ``hello`` with the name ``cpu-bot cores=C`` (``C`` from the
``hello``'s ``cores``) and the version ``cpus=0,1`` (the cores it may run on), and
each ``go`` with the first legal action.

* ``quiet``: nothing more.
* ``work N``: ``N`` loop iterations of pure Python work before each answer (the
  same work every move, so its time per move shows how much CPU it was given).
* ``hog N [W]``: at start, ``N`` busy processes, each in a session of its own (so each
  gets a scheduler autogroup of its own), which spin until the bot is killed; and
  ``W`` loop iterations of work before each answer (default none).
* ``sleep S``: sleeps ``S`` seconds (using no CPU) before its first answer of each game.
* ``spin``: after each answer (and after a ``gameover``), a thread that spins until
  the next line arrives: a bot that thinks on its opponent's time (and between games).
"""

import json
import os
import sys
import threading
import time

mode = sys.argv[1]
count = int(sys.argv[2]) if len(sys.argv) > 2 and mode != "sleep" else 0
first = True


def send(obj: dict) -> None:
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def busy() -> None:
    while True:
        pass


if mode == "hog":
    for _ in range(count):
        if os.fork() == 0:
            os.setsid()
            busy()

waiting = threading.Event()


def spin() -> None:
    while True:
        waiting.wait()
        while waiting.is_set():
            pass


if mode == "spin":
    threading.Thread(target=spin, daemon=True).start()

for line in sys.stdin:
    waiting.clear()
    msg = json.loads(line)
    kind = msg["type"]
    if kind == "hello":
        name = f"cpu-bot cores={msg.get('cores')}"
        send(
            {
                "type": "identity",
                "id": msg["id"],
                "protocol": 1,
                "name": name,
                "version": "cpus=" + ",".join(map(str, sorted(os.sched_getaffinity(0)))),
                "games": ["kamisado"],
            }
        )
    elif kind == "newgame":
        first = True
        send({"type": "ready", "id": msg["id"]})
    elif kind == "go":
        if mode == "sleep" and first:
            time.sleep(float(sys.argv[2]))
        first = False
        if mode == "work" or (mode == "hog" and len(sys.argv) > 3):
            x = 0
            for i in range(count if mode == "work" else int(sys.argv[3])):
                x += i * i % 7
        send({"type": "action", "id": msg["id"], "action": msg["legal"][0]})
        if mode == "spin":
            waiting.set()
    elif kind == "gameover" and mode == "spin":
        waiting.set()
    elif kind == "quit":
        break
