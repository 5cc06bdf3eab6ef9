"""Getting the built-in bots ready before their first game.

The searching bots' (alphabeta's, mcts's) search is compiled machine code
kept in a cache beside their source. Built inside a game, it would cost
seconds of start-up in every game (the sandbox sees the cache folder
read-only) and could overrun the handshake. So whoever is about to start games
(the tournament, ``arena play``, ``check-bot``, the openings generator, a Ray
actor on its node) first calls :func:`prepare` with the name of each built-in
bot (``builtin:NAME`` in a tournament file or on the command line; nothing
is inferred from a command's paths); for a searching one it runs the bots' own
preparation (``arena.bots``'s ``prepare.py``, found by
:mod:`arena.plan.builtins`) outside the sandbox: trusted code of the arena's
own package, under the arena's own interpreter (``sys.executable``), with a
scrubbed environment and the bots' folder as its working directory. Nothing
an entrant supplies (an interpreter, a script, a variable) runs outside the
sandbox. The engine itself only starts processes: it knows nothing of this.

Three properties, each for a reason seen in practice:

* **Nothing to do costs nothing.** Starting the preparation only to find its
  cache built took 1.5 s and more of every ``arena run`` (loading numba and the
  cache), and each worker process paid it again. The preparation therefore
  reports the files its cache was built from and the cache files themselves;
  the arena keeps their sizes, modification times and (for the small ones)
  content hashes in a stamp beside the cache (:func:`up_to_date`), and while
  they all match, no process is started at all. It may also name files that
  are absent and would change what it does if they appeared (a C compiler,
  Python's headers): the stamp then holds only while they stay absent.
* **It dies with the arena.** It is a child in a process group of its own,
  spawned with ``PR_SET_PDEATHSIG`` (:func:`arena.engine.process.child_preexec`),
  so a SIGKILLed arena takes it along; any other end of the call kills its group.
* **It says "compiling" only when it compiles.** The preparation prints a
  ``compiling`` line when numba starts compiling a kernel (a cache miss), and
  only then does the arena say what it is waiting for.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
from contextlib import suppress
from pathlib import Path

import trio

from arena.engine.process import child_preexec, spawn
from arena.plan.builtins import folder, prepare_command, stamp_path
from arena.protocol.messages import EndOfStream, LineReader, ProtocolError

PREPARE_TIMEOUT = 600.0
"""Seconds a preparation may take (compiling from scratch takes about 45 s)."""

COMPILING = "arena: compiling the built-in bots' search (once per machine, about 45 s)..."
"""Said when the preparation reports that it compiles."""

MAX_REPORT = 1 << 20
"""Longest line the preparation may write (its report names a few dozen files)."""
STDERR_TAIL = 4096
"""Bytes of the preparation's stderr kept for a one-line error."""
HASHED = 64 << 10
"""Files up to this size are fingerprinted by content too (the sources, the cache's
indexes); larger ones (compiled code, the interpreter) by size and modification time
alone, as numba checks its own source: the check stays a few milliseconds."""

KEPT_ENV = ("PATH", "HOME", "LANG")
"""All the preparation keeps of the arena's environment (``PATH`` finds the C
compiler), as a bot does: nothing else of the operator's shell reaches it."""

_done: dict[tuple[str, ...], str | None] = {}
_LOCK = trio.Lock()
"""Preparations run one at a time: they compile the same cache."""


async def prepare(builtin: str | None) -> str | None:
    """Get built-in bot ``builtin`` (a name; ``None`` for a bot that is not built in)
    ready if it has a preparation (at most once per process; concurrent callers
    wait for the first). An error line if it failed (the bot then builds its
    cache itself, more slowly), else ``None``."""
    warm = prepare_command(builtin)
    if warm is None:
        return None
    key = tuple(warm)
    if key in _done:
        return _done[key]
    async with _LOCK:
        if key not in _done:
            _done[key] = None if up_to_date(warm) else await _run(warm)
            if _done[key] is not None:
                print(f"arena: warning: {_done[key]}", file=sys.stderr, flush=True)
    return _done[key]


# ----------------------------------------------------------------------------- the stamp


def fingerprint(path: str) -> list[object] | None:
    """``[size, mtime_ns, sha256 or None]`` of ``path``; ``None`` if it cannot be read."""
    try:
        st = os.stat(path)
        digest = None
        if st.st_size <= HASHED:
            digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, digest]


def up_to_date(warm: list[str]) -> bool:
    """Whether the stamp says ``warm`` has nothing to do: written by this command (in
    this environment), every file it names unchanged and every file it names absent
    still absent. Any doubt (no stamp, a bad one) is ``False``."""
    path = stamp_path()
    if path is None:
        return False
    try:
        stamp = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(stamp, dict) or stamp.get("command") != _key(warm):
        return False
    files, absent = stamp.get("files"), stamp.get("absent", [])
    if not isinstance(files, dict) or not files or not isinstance(absent, list):
        return False
    if any(not isinstance(name, str) or os.path.lexists(name) for name in absent):
        return False
    return all(fingerprint(name) == seen for name, seen in files.items())


def _key(warm: list[str]) -> list[str]:
    """``warm`` as the stamp knows it: its interpreter by the folder it lies in, the
    environment it runs in (``.venv/bin/python`` and ``.venv/bin/python3`` are one)."""
    return [os.path.realpath(os.path.dirname(warm[0])), *warm[1:]]


def write_stamp(warm: list[str], files: list[str], absent: list[str] | None = None) -> None:
    """Record ``files`` as ``warm`` left them, and ``absent`` as absent (atomically; a
    failure leaves no stamp)."""
    path = stamp_path()
    if path is None:
        return
    prints = {name: fingerprint(name) for name in files}
    if not prints or any(p is None for p in prints.values()):
        return
    absent = absent or []
    if any(os.path.lexists(name) for name in absent):
        return
    text = json.dumps({"command": _key(warm), "files": prints, "absent": absent}, indent=1)
    text += "\n"
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    try:
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, path)
    except OSError:
        with suppress(OSError):
            partial.unlink()


# ----------------------------------------------------------------------------- the process


def _workdir() -> str | None:
    """The built-in bots' folder: not the arena's working folder, where entrants' files lie."""
    where = folder()
    return None if where is None else str(where)


def _label(warm: list[str]) -> str:
    return warm[1] if len(warm) > 1 else warm[0]


async def _run(warm: list[str]) -> str | None:
    """Run the preparation as a child that dies with the arena; stamp its cache on success."""
    try:
        process = spawn(
            warm,
            stdin=subprocess.DEVNULL,
            cwd=_workdir(),
            env={k: os.environ[k] for k in KEPT_ENV if k in os.environ},
            start_new_session=True,
            preexec_fn=child_preexec([]),
        )
    except OSError as exc:
        return f"preparing {_label(warm)} failed: {exc}"
    report: list[str] = []
    tail = bytearray()

    async def read_stdout() -> None:
        assert process.stdout is not None
        lines = LineReader(process.stdout, MAX_REPORT)
        said = False
        while True:
            try:
                line = (await lines.receive_line()).decode("utf-8", "replace")
            except (EndOfStream, ProtocolError):
                return
            if line == "compiling" and not said:
                said = True
                print(COMPILING, file=sys.stderr, flush=True)
            elif line.startswith("{"):
                report.append(line)

    async def read_stderr() -> None:
        assert process.stderr is not None
        while chunk := await process.stderr.receive_some(65536):
            tail.extend(chunk)
            del tail[:-STDERR_TAIL]

    try:
        with trio.fail_after(PREPARE_TIMEOUT):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(read_stdout)
                nursery.start_soon(read_stderr)
                code = await process.wait()
                with suppress(ProcessLookupError, PermissionError):
                    os.killpg(process.pid, signal.SIGKILL)  # anything left holding the pipes
    except trio.TooSlowError:
        return f"preparing {_label(warm)} failed: too slow (over {PREPARE_TIMEOUT:g} s)"
    finally:
        with trio.CancelScope(shield=True):
            with suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)  # cancelled or too slow: the whole group
            await process.wait()
            await process.aclose_streams()
    if code != 0:
        lines = tail.decode("utf-8", "replace").strip().splitlines()
        why = lines[-1] if lines else f"exit code {code}"
        return f"preparing {_label(warm)} failed: {why}"
    files, absent = _reported_files(report)
    if files:
        write_stamp(warm, files, absent)
    return None


def _reported_files(report: list[str]) -> tuple[list[str], list[str]]:
    """The files the preparation's last report line names, and those it names as
    absent (no files: its cache is not the tree's, so there is nothing to stamp)."""
    try:
        line = json.loads(report[-1]) if report else {}
        files, absent = line.get("files", []), line.get("absent", [])
    except (ValueError, AttributeError):
        return [], []
    if not isinstance(files, list) or not isinstance(absent, list):
        return [], []
    return [f for f in files if isinstance(f, str)], [f for f in absent if isinstance(f, str)]
