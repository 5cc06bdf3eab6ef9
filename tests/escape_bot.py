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
* ``alloc``: allocate memory without bound (returns only by failing);
* ``read PATH...``: read each file (and those in ``$ESCAPE_PATHS``, colon
  separated: paths the arena does not see on the command line);
* ``addkey NAME VALUE``: add a key to the session keyring (``add_key``);
* ``readkey NAME``: find that key (``request_key``) and read it (``keyctl``),
  at every ``go`` until it succeeds (another bot may add it later);
* ``fork N``: start N children that wait; reports how many started;
* ``hoard MB N``: hold MB in a memfd, then start N children holding MB each;
  reports the total held (all of it touched, so it is resident);
* ``unix``: connect to the unix socket at ``$ESCAPE_SOCKET``;
* ``userns``: start a child in a new user namespace (``clone``, as a browser's
  sandbox would), then move into one (``unshare(CLONE_NEWUSER)``, as
  ``unshare -U`` does).
"""

from __future__ import annotations

import ctypes
import mmap
import os
import platform
import select
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


def read(paths: list[str]) -> None:
    for path in [*paths, *filter(None, os.environ.get("ESCAPE_PATHS", "").split(":"))]:
        try:
            with open(path, "rb") as f:
                data = f.read(64)
        except OSError as exc:
            report(f"read {path}", exc)
        else:
            report(f"read {path}", None)
            print(f"ESCAPE read {path} gave {data!r}", file=sys.stderr, flush=True)


# add_key, request_key, keyctl
KEY_CALLS = {"x86_64": (248, 249, 250), "aarch64": (217, 218, 219)}[platform.machine()]
KEY_SPEC_SESSION_KEYRING = -3
KEYCTL_READ = 11
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def addkey(name: str, value: str) -> None:
    data = value.encode()
    got = libc.syscall(
        KEY_CALLS[0],
        b"user",
        name.encode(),
        data,
        ctypes.c_size_t(len(data)),
        ctypes.c_int(KEY_SPEC_SESSION_KEYRING),
    )
    report(f"addkey {name}", None if got >= 0 else os.strerror(ctypes.get_errno()))


def readkey(name: str, first: bool) -> bool:
    key = libc.syscall(KEY_CALLS[1], b"user", name.encode(), None, ctypes.c_int(0))
    if key < 0:
        if first:
            report(f"readkey {name}", os.strerror(ctypes.get_errno()))
        return False
    buf = ctypes.create_string_buffer(256)
    size = libc.syscall(
        KEY_CALLS[2], ctypes.c_int(KEYCTL_READ), ctypes.c_long(key), buf, ctypes.c_size_t(256)
    )
    report(f"readkey {name}", None if size >= 0 else os.strerror(ctypes.get_errno()))
    if size >= 0:
        print(f"ESCAPE readkey {name} gave {buf.raw[:size]!r}", file=sys.stderr, flush=True)
    return size >= 0


def wait_children(pipe: int, count: int) -> int:
    """How many children wrote their byte to ``pipe`` within 5 s (one killed never writes)."""
    done = 0
    while done < count and select.select([pipe], [], [], 5)[0]:
        got = os.read(pipe, count - done)
        if not got:
            break
        done += len(got)
    return done


def start_children(count: int, hold_mb: int) -> int:
    r, w = os.pipe()
    started = 0
    for _ in range(count):
        try:
            pid = os.fork()
        except OSError as exc:
            report(f"fork {started + 1}", exc)
            break
        if pid == 0:
            os.close(r)
            try:
                held = b"\x01" * (hold_mb << 20)  # touched: resident
                os.write(w, b"x")
                del held  # (never reached before the game kills it)
                signal.pause()
            finally:
                os._exit(0)
        started += 1
    os.close(w)
    return wait_children(r, started)


def fork(count: int) -> None:
    report(f"fork {count}", f"{start_children(count, 0)} started")


def hoard(mb: int, count: int) -> None:
    held = 0
    try:
        fd = os.memfd_create("hoard")
        chunk = b"\x01" * (1 << 20)
        for _ in range(mb):
            os.write(fd, chunk)
        held += mb
    except OSError as exc:
        report("hoard memfd", exc)
    held += mb * start_children(count, mb)
    report(f"hoard held {held} MB", None)


def unix() -> None:
    path = os.environ["ESCAPE_SOCKET"]
    try:
        with socket.socket(socket.AF_UNIX) as sock:
            sock.settimeout(2)
            sock.connect(path)
    except OSError as exc:
        report(f"unix {path}", exc)
    else:
        report(f"unix {path}", None)


CLONE_NEWUSER = 0x10000000
CLONE_CALL = {"x86_64": 56, "aarch64": 220}[platform.machine()]


def userns() -> None:
    # clone(CLONE_NEWUSER | SIGCHLD) with no new stack: the child returns 0 and exits.
    # First: once unshared into a namespace without a uid map, clone would fail anyway.
    pid = libc.syscall(
        CLONE_CALL, ctypes.c_ulong(CLONE_NEWUSER | signal.SIGCHLD), None, None, None, None
    )
    if pid == 0:
        os._exit(0)
    if pid > 0:
        os.waitpid(pid, 0)
    report("userns clone", None if pid > 0 else os.strerror(ctypes.get_errno()))
    got = libc.unshare(ctypes.c_int(CLONE_NEWUSER))
    report("userns unshare", None if got == 0 else os.strerror(ctypes.get_errno()))


attempted = False
key_read = False


def choose(request: Request) -> str:
    global attempted, key_read
    if MODE == "readkey" and not key_read:
        key_read = readkey(ARGS[0], first=not attempted)
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
        elif MODE == "read":
            read(ARGS)
        elif MODE == "addkey":
            addkey(ARGS[0], ARGS[1])
        elif MODE == "fork":
            fork(int(ARGS[0]))
        elif MODE == "hoard":
            hoard(int(ARGS[0]), int(ARGS[1]))
        elif MODE == "unix":
            unix()
        elif MODE == "userns":
            userns()
    return request.legal[0]


run(choose, name=f"escape-{MODE}", author="tests", games=("kamisado",))
