"""A protocol bot that misbehaves on demand, for the engine, referee and tournament tests.

    python bad_bot.py MODE [ARG] [--state DIR] [--once] [--at N]

Behaves normally (answers ``info`` then the first legal action) except in the
way MODE says. Faults that concern a decision happen at the ``--at``-th ``go``
of the process (default the first). ``--state DIR`` records every pid started
(``DIR/pids``) and the ``legal`` list of every ``go`` received (``DIR/go.log``);
with ``--once`` as well, only the first process misbehaves and later ones
behave, so a test can check that a restarted bot plays on normally.

Modes: normal, exit_at_start, bad_version, unsupported, ignore_quit,
exit, abort, sigkill, sigsegv, never_answer, sleep (ARG seconds, at the --at-th
go), sleep_each (ARG seconds, every go), garbage, long_line, stderr_flood,
illegal, wrong_type, wrong_id, close_stdout, stop_reading (answers, then never
reads its input again), deep_nesting (an action whose unknown
field is nested 1,000 levels deep), info_flood (ARG info lines of 1 MB before the
action), stderr_long_line (a 64 KiB stderr line between two short ones, then
the action), child_ignores_term (a helper that
ignores SIGTERM holds our stdout; we exit on the go), child_hang (same helper;
we hang on the go), meet (answers ``hello`` only once another bot sharing the
parent of its ``--state`` folder has started too, within ARG seconds; else exits
with code 4: two of them play a game only if the arena starts them at once).
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import time

parser = argparse.ArgumentParser()
parser.add_argument("mode")
parser.add_argument("arg", nargs="?", type=float, default=0.0)
parser.add_argument("--state")
parser.add_argument("--once", action="store_true")
parser.add_argument("--at", type=int, default=1)
args = parser.parse_args()
mode = args.mode

if args.state:
    with open(os.path.join(args.state, "pids"), "a") as f:
        f.write(f"{os.getpid()}\n")
    marker = os.path.join(args.state, "marker")
    if args.once and os.path.exists(marker):
        mode = "normal"  # behaved badly before: behave now
    open(marker, "a").close()


def send(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


if mode == "exit_at_start":
    print("cannot start", file=sys.stderr, flush=True)
    sys.exit(3)
if mode in ("child_ignores_term", "child_hang"):
    # A helper that ignores SIGTERM and keeps our pipes open.
    helper = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(60)"
    subprocess.Popen([sys.executable, "-c", helper])
if mode == "ignore_quit":
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
if mode == "meet":
    assert args.state, "meet needs --state"
    here = os.path.dirname(os.path.abspath(args.state))
    open(os.path.join(args.state, "started"), "a").close()
    deadline = time.monotonic() + args.arg
    while sum(os.path.exists(os.path.join(here, d, "started")) for d in os.listdir(here)) < 2:
        if time.monotonic() > deadline:
            print("no other bot started within the deadline", file=sys.stderr, flush=True)
            sys.exit(4)
        time.sleep(0.01)

gos = 0
for line in sys.stdin:
    msg = json.loads(line)
    t = msg["type"]
    if t == "hello":
        send(
            {
                "type": "identity",
                "id": msg["id"],
                "protocol": 2 if mode == "bad_version" else msg["protocol"],
                "name": "testbot",
                "author": "tests",
                "version": "1",
                "games": ["chess"] if mode == "unsupported" else ["kamisado"],
            }
        )
    elif t == "newgame":
        send({"type": "ready", "id": msg["id"]})
    elif t == "ping":
        send({"type": "pong", "id": msg["id"]})
    elif t == "quit":
        if mode == "ignore_quit":
            continue
        sys.exit(0)
    elif t == "gameover":
        print("game over:", msg["result"], msg["reason"], file=sys.stderr, flush=True)
    elif t == "go":
        gos += 1
        i, legal = msg["id"], msg["legal"]
        if args.state:
            with open(os.path.join(args.state, "go.log"), "a") as f:
                f.write(json.dumps(legal) + "\n")
        if mode == "sleep_each":
            time.sleep(args.arg)
        if gos == args.at:
            if mode == "exit":
                print("about to exit", file=sys.stderr, flush=True)
                sys.exit(7)
            if mode == "abort":
                os.abort()
            if mode == "sigkill":
                os.kill(os.getpid(), signal.SIGKILL)
            if mode == "sigsegv":
                os.kill(os.getpid(), signal.SIGSEGV)
            if mode in ("never_answer", "child_hang"):
                time.sleep(600)
            if mode == "sleep":
                time.sleep(args.arg)
            if mode == "garbage":
                sys.stdout.write("bestmove c1-c5\n")
                sys.stdout.flush()
                continue
            if mode == "long_line":
                block = "x" * 65536
                for _ in range(160):  # 10 MiB, no newline
                    sys.stdout.write(block)
                sys.stdout.flush()
                time.sleep(600)
            if mode == "stderr_flood":
                for n in range(100000):
                    sys.stderr.write(f"debug line {n} " + "y" * 40 + "\n")
                sys.stderr.flush()
            if mode == "illegal":
                send({"type": "action", "id": i, "action": "b1-b9"})
                continue
            if mode == "deep_nesting":
                deep = "[" * 1000 + "]" * 1000
                sys.stdout.write(f'{{"type":"action","id":{i},"action":"{legal[0]}","x":{deep}}}\n')
                sys.stdout.flush()
                continue
            if mode == "info_flood":
                flood = json.dumps({"type": "info", "id": i, "text": "i" * 1_000_000}) + "\n"
                for _ in range(int(args.arg)):
                    sys.stdout.write(flood)
                sys.stdout.flush()
            if mode == "stderr_long_line":
                sys.stderr.write("before the long line\n" + "L" * 65536 + "\nafter it\n")
                sys.stderr.flush()
            if mode == "wrong_type":
                send({"type": "pong", "id": i})
                continue
            if mode == "wrong_id":
                send({"type": "action", "id": i + 1, "action": legal[0]})
                continue
            if mode == "close_stdout":
                sys.stdout.close()
                os.close(1)
                time.sleep(600)
            if mode == "child_ignores_term":
                os._exit(5)  # the helper still holds our stdout
            if mode == "stop_reading":
                send({"type": "action", "id": i, "action": legal[0]})
                time.sleep(600)  # stdin fills up: the arena's next long line cannot be written
        send({"type": "info", "id": i, "depth": 1, "score": 0.25, "pv": [legal[0]]})
        send({"type": "action", "id": i, "action": legal[0]})

if mode == "ignore_quit":
    time.sleep(600)  # not even the end of stdin makes it leave
