"""A bot that tries to reach outside its game, then plays the first legal action.

    python escape_bot.py MODE [ARG...]

Modes (the attempt happens at the first ``go``; each outcome is one stderr line
``ESCAPE <what> failed: <why>`` or ``ESCAPE <what> succeeded``):

* ``write PATH...``: create each file (and append to it if it exists);
* ``connect PORT``: open a TCP connection to 127.0.0.1:PORT;
* ``environ SECRET``: look for SECRET in its parent's ``/proc/PID/environ`` and
  in every other readable ``/proc/*/environ``; also reports how many processes
  ``/proc`` shows;
* ``setsid MARKER [hang]``: start a grandchild in a new session, ignoring
  SIGTERM, whose command line holds ``MARKER-orphan`` (double fork: it is
  nobody's child);
  with ``hang``, never answer afterwards (so the game lasts until it is killed);
* ``alloc``: allocate memory without bound (returns only by failing).
"""

from __future__ import annotations

import mmap
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

from arena.sdk import Request, run

MODE, ARGS = sys.argv[1], sys.argv[2:]


def report(what: str, error: BaseException | str | None) -> None:
    outcome = "succeeded" if error is None else f"failed: {error}"
    print(f"ESCAPE {what} {outcome}", file=sys.stderr, flush=True)


def write(paths: list[str]) -> None:
    for path in paths:
        try:
            with open(path, "ab") as f:
                f.write(b"escaped\n")
        except OSError as exc:
            report(f"write {path}", exc)
        else:
            report(f"write {path}", None)


def connect(port: int) -> None:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            pass
    except OSError as exc:
        report(f"connect 127.0.0.1:{port}", exc)
    else:
        report(f"connect 127.0.0.1:{port}", None)


def environ(secret: str) -> None:
    pids = [p for p in os.listdir("/proc") if p.isdigit()]
    print(f"ESCAPE procs visible: {len(pids)}", file=sys.stderr, flush=True)
    found = []
    for pid in [str(os.getppid()), *pids]:
        try:
            if secret.encode() in Path(f"/proc/{pid}/environ").read_bytes():
                found.append(pid)
        except OSError:
            continue
    report(f"environ (parent {os.getppid()})", None if found else f"{secret!r} in no environ")


SLEEPER = "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(600)"


def setsid(marker: str) -> None:
    if os.fork() == 0:  # the child starts the grandchild in a new session and leaves
        subprocess.Popen(
            [sys.executable, "-c", SLEEPER, f"{marker}-orphan"],
            start_new_session=True,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os._exit(0)
    os.wait()
    report(f"setsid {marker}", "spawned: only the arena can tell whether it outlives the game")
    if "hang" in ARGS:
        while True:
            signal.pause()


def alloc() -> None:
    # Untouched anonymous maps: address space grows as fast as it can without
    # writing gigabytes of RAM on a shared machine (a limit on address space,
    # RLIMIT_AS, stops both the same way).
    hoard = []
    while True:
        hoard.append(mmap.mmap(-1, 64 << 20))


attempted = False


def choose(request: Request) -> str:
    global attempted
    if not attempted:
        attempted = True
        if MODE == "write":
            write(ARGS)
        elif MODE == "connect":
            connect(int(ARGS[0]))
        elif MODE == "environ":
            environ(ARGS[0])
        elif MODE == "setsid":
            setsid(ARGS[0])
        elif MODE == "alloc":
            alloc()
    return request.legal[0]


run(choose, name=f"escape-{MODE}", author="tests", games=("kamisado",))
