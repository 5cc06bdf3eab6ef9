"""A bot that tries what language runtimes do at start-up, then plays the first legal action.

    python runtime_bot.py [strict] CHECK[=ARG] ...

Each check runs before the handshake and reports one stderr line
``RUNTIME <check> ok`` or ``RUNTIME <check> failed: <why>``; with ``strict``
a failed check ends the bot (status 3) before it answers anything:

* ``reserve=MB``: reserve MB of address space without touching it (as a JVM
  reserves its heap and class space, or Go and Node their arenas);
* ``shm``: a :mod:`multiprocessing` lock (a POSIX semaphore in ``/dev/shm``)
  and a pool of two processes; then a file of its own in ``/dev/shm``;
* ``read=PATH``: read the file PATH (or list the folder PATH);
* ``absent=PATH``: PATH must not exist for it;
* ``nothing=PATH``: PATH must not exist, or show nothing (empty, or unreadable);
* ``env=NAME``: the variable NAME must be set;
* ``cwd=PATH``: it must start in PATH;
* ``user=NAME``: it must run as the user NAME;
* ``etc=FILE``: write to FILE the paths (relative to ``/etc``) of every regular
  file under ``/etc`` it can read, one a line (links not followed).
"""

from __future__ import annotations

import json
import mmap
import multiprocessing
import os
import sys


def square(x: int) -> int:
    return x * x


def check(word: str) -> None:
    name, _, arg = word.partition("=")
    if name == "reserve":
        size = int(arg) << 20
        flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | getattr(mmap, "MAP_NORESERVE", 0)
        region = mmap.mmap(-1, size, flags=flags, prot=0)  # PROT_NONE: reserved, not usable
        region.close()
    elif name == "shm":
        lock = multiprocessing.Lock()
        with lock:
            pass
        with multiprocessing.get_context("fork").Pool(2) as pool:
            assert pool.map(square, range(4)) == [0, 1, 4, 9]
        path = f"/dev/shm/runtime-bot-{os.getpid()}"
        with open(path, "w") as f:
            f.write("mine")
        os.unlink(path)
    elif name == "read":
        if os.path.isdir(arg):
            os.listdir(arg)
        else:
            with open(arg, "rb") as f:
                f.read()
    elif name == "absent":
        if os.path.lexists(arg):
            raise RuntimeError(f"{arg} exists")
    elif name == "etc":
        readable = []
        for folder, _, files in os.walk("/etc"):
            for file in files:
                path = os.path.join(folder, file)
                if os.path.isfile(path) and not os.path.islink(path) and os.access(path, os.R_OK):
                    readable.append(os.path.relpath(path, "/etc"))
        with open(arg, "w") as f:
            f.write("".join(f"{p}\n" for p in sorted(readable)))
    elif name == "nothing":
        try:
            with open(arg, "rb") as f:
                if f.read(1):
                    raise RuntimeError(f"{arg} shows its content")
        except (FileNotFoundError, PermissionError, IsADirectoryError):
            if os.path.isdir(arg) and os.listdir(arg):
                raise RuntimeError(f"{arg} shows its files") from None
    elif name == "cwd":
        if os.getcwd() != arg:
            raise RuntimeError(f"started in {os.getcwd()}")
    elif name == "user":
        import pwd

        if pwd.getpwuid(os.getuid()).pw_name != arg:
            raise RuntimeError(f"runs as uid {os.getuid()}")
    elif name == "env":
        if arg not in os.environ:
            raise RuntimeError(f"${arg} is not set")
    else:
        raise ValueError(f"unknown check {name!r}")


def main() -> None:
    words = sys.argv[1:]
    strict = words[:1] == ["strict"]
    for word in words[strict:]:
        try:
            check(word)
        except Exception as exc:  # every failure is the report, whatever its kind
            print(f"RUNTIME {word} failed: {type(exc).__name__}: {exc}", file=sys.stderr)
            if strict:
                sys.exit(3)
        else:
            print(f"RUNTIME {word} ok", file=sys.stderr)
    sys.stderr.flush()
    for line in sys.stdin:
        if not line.strip():
            continue
        msg = json.loads(line)
        kind = msg["type"]
        if kind == "hello":
            reply = {"type": "identity", "id": msg["id"], "protocol": 1, "name": "runtime"}
            reply |= {"author": "tests", "version": "1", "games": ["kamisado", "sekigahara"]}
        elif kind == "newgame":
            reply = {"type": "ready", "id": msg["id"]}
        elif kind == "ping":
            reply = {"type": "pong", "id": msg["id"]}
        elif kind == "go":
            reply = {"type": "action", "id": msg["id"], "action": msg["legal"][0]}
        elif kind == "quit":
            return
        else:
            continue
        print(json.dumps(reply, separators=(",", ":")), flush=True)


if __name__ == "__main__":
    main()
