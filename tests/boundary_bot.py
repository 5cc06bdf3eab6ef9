"""A bot that presses on the arena's bounds, then plays the first legal action.

    python boundary_bot.py MODE [ARG...]

Modes (the attempt happens at the first ``go``; each outcome is one stderr line
``BOUND <what> <outcome>``):

* ``threads N``: start N threads (small stacks, so memory is not what stops
  them), each waiting; reports how many started;
* ``kernel``: ``io_uring_setup``, ``memfd_secret`` and an ``AF_VSOCK`` socket,
  each by its system call; reports each one's errno name (or ``ok``);
* ``info BYTES``: before every action an ``info`` line with a ``text`` of BYTES
  characters and a long ``pv`` (no attempt, no report).
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import socket
import sys
import threading

from arena.sdk import Request, run

MODE, ARGS = sys.argv[1], sys.argv[2:]

# x86-64 and aarch64 share these numbers (the newer calls are numbered alike everywhere).
IO_URING_SETUP = 425
MEMFD_SECRET = 447
AF_VSOCK = 40


def report(what: str, outcome: str) -> None:
    print(f"BOUND {what} {outcome}", file=sys.stderr, flush=True)


def threads(count: int) -> None:
    threading.stack_size(64 << 10)
    stop = threading.Event()
    started = 0
    for _ in range(count):
        try:
            threading.Thread(target=stop.wait, daemon=True).start()
        except RuntimeError:  # can't start new thread
            break
        started += 1
    report("threads", f"{started} started")


def syscall(number: int, *args: int) -> str:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    got = libc.syscall(ctypes.c_long(number), *(ctypes.c_long(a) for a in args))
    if got < 0:
        return errno.errorcode.get(ctypes.get_errno(), str(ctypes.get_errno()))
    os.close(got)
    return "ok"


def kernel() -> None:
    if platform.machine() not in ("x86_64", "aarch64"):
        report("arch", platform.machine())
    params = ctypes.create_string_buffer(120)  # struct io_uring_params, zeroed
    report("io_uring_setup", syscall(IO_URING_SETUP, 4, ctypes.addressof(params)))
    report("memfd_secret", syscall(MEMFD_SECRET, 0))
    try:
        socket.socket(AF_VSOCK, socket.SOCK_STREAM).close()
    except OSError as exc:
        report("socket AF_VSOCK", errno.errorcode.get(exc.errno or 0, str(exc.errno)))
    else:
        report("socket AF_VSOCK", "ok")
    try:
        socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()
        report("socket AF_INET", "ok")
    except OSError as exc:
        report("socket AF_INET", errno.errorcode.get(exc.errno or 0, str(exc.errno)))


attempted = False


def choose(request: Request) -> str | tuple[str, dict[str, object]]:
    global attempted
    if MODE == "info":
        size = int(ARGS[0])
        return request.legal[0], {"depth": 1, "text": "x" * size, "pv": ["a1-b2"] * 2000}
    if not attempted:
        attempted = True
        if MODE == "threads":
            threads(int(ARGS[0]))
        elif MODE == "kernel":
            kernel()
    return request.legal[0]


run(choose, name=f"bound-{MODE}", author="tests", games=("kamisado",))
