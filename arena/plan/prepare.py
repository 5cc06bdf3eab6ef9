"""Getting a built-in bot ready before its first game, once per arena process.

The searching bots' (alphabeta's, mcts's) search is compiled machine code
kept in a cache beside their source. Built inside a game, it would cost seconds of start-up in every
game (the sandbox sees the cache folder read-only) and could overrun the
handshake. So before the first game of such a bot the arena runs the bot's
own preparation command (``bots.prepare_command``: the compiled search
with ``--warm``), outside the sandbox: trusted code of the arena's own package,
which builds the cache once and is a quick no-op afterwards. Bots that are
not built-in are never run outside the sandbox.
"""

from __future__ import annotations

import subprocess
import sys

import trio

PREPARE_TIMEOUT = 600.0
"""Seconds a preparation may take (compiling from scratch takes about 15 s)."""

_done: dict[tuple[str, ...], str | None] = {}
_LOCK = trio.Lock()
"""Preparations run one at a time: they compile the same cache."""


def _prepare_command(command: list[str]) -> list[str] | None:
    from arena.plan.config import builtin_function

    find = builtin_function("prepare_command")
    return None if find is None else find(command)


async def prepare(command: list[str]) -> str | None:
    """Run ``command``'s preparation if it is a built-in bot that has one (once
    per process; concurrent callers wait for the first). An error line if it
    failed (the bot then builds its cache itself, more slowly), else ``None``."""
    warm = _prepare_command(command)
    if warm is None:
        return None
    key = tuple(warm)
    if key in _done:
        return _done[key]
    async with _LOCK:
        if key not in _done:
            _done[key] = await _run(warm)
            if _done[key] is not None:
                print(f"arena: warning: {_done[key]}", file=sys.stderr, flush=True)
    return _done[key]


NOTICE_AFTER = 2.0
"""Seconds of preparing after which the arena says what it is waiting for."""


async def _notice() -> None:
    await trio.sleep(NOTICE_AFTER)
    print(
        "arena: compiling the built-in bots' search (once per machine, about 15 s)...",
        file=sys.stderr,
        flush=True,
    )


async def _run(warm: list[str]) -> str | None:
    try:
        with trio.fail_after(PREPARE_TIMEOUT):
            async with trio.open_nursery() as nursery:
                nursery.start_soon(_notice)
                done = await trio.run_process(
                    warm,
                    capture_stdout=True,
                    capture_stderr=True,
                    check=False,
                    stdin=subprocess.DEVNULL,
                )
                nursery.cancel_scope.cancel()
    except (OSError, trio.TooSlowError) as exc:
        return f"preparing {warm[1] if len(warm) > 1 else warm[0]} failed: {exc or 'too slow'}"
    if done.returncode != 0:
        lines = done.stderr.decode("utf-8", "replace").strip().splitlines()
        why = lines[-1] if lines else f"exit code {done.returncode}"
        return f"preparing {warm[1] if len(warm) > 1 else warm[0]} failed: {why}"
    return None
