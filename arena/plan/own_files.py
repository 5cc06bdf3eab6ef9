"""A bot's own files: which paths of its command line and grants it may be shown.

The sandbox shows a bot every path on its command line (with its folder) and its
grants (``arena/engine/sandbox.py``), bound at their real paths. An entrant's
folder is the entrant's: a symbolic link in it (``bot.py`` leading into a rival's
folder, ``data`` leading to the tournament file) would show the bot whatever it
leads to. So, checked once at load: a path on a bot's command line, or in a
relative grant, that passes through a symbolic link must end inside the bot's
folder (its ``cwd`` or its program's folder), or where every bot sees anyway
(the system runtime, the arena's interpreter and package) or in an absolute grant
the operator wrote. Otherwise it is refused in one line naming the entry, the
path and where it leads. A path that passes through no link is shown as the
operator wrote it, and absolute grants stay as the operator wrote them.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Sequence

from arena.engine.sandbox import SYSTEM, arena_package

__all__ = ["OwnFilesError", "bot_folders", "grant_lines", "leading_out", "refused"]


class OwnFilesError(ValueError):
    """A path that would show a bot what is not its own; one line."""


def _inside(path: str, roots: Sequence[str]) -> bool:
    return any(path == r or path.startswith(r.rstrip("/") + "/") for r in roots)


def bot_folders(cwd: str | None, program_folder: str | None) -> list[str]:
    """The bot's own folders, real paths: its working directory and its program's folder."""
    return [os.path.realpath(f) for f in dict.fromkeys((cwd, program_folder)) if f]


def _seen_anyway() -> list[str]:
    """Where every bot sees: the system runtime, the arena's interpreter and package."""
    import sys

    arena = [sys.prefix, sys.base_prefix, arena_package()]
    return [*SYSTEM, *dict.fromkeys(os.path.realpath(p) for p in arena)]


def leading_out(path: str, folders: Sequence[str], granted: Sequence[str] = ()) -> str | None:
    """Where ``path`` (absolute) really leads if a symbolic link takes it out of
    ``folders`` (real paths), out of what every bot sees and out of ``granted``
    (absolute grants); else ``None``."""
    lexical = os.path.normpath(path)
    real = os.path.realpath(lexical)
    if real == lexical:
        return None
    allowed = [*folders, *_seen_anyway(), *(os.path.realpath(g) for g in granted)]
    return None if _inside(real, allowed) else real


def command_paths(command: Sequence[str], cwd: str | None, path_env: str | None) -> list[str]:
    """The paths of ``command`` the sandbox shows (as :func:`arena.engine.sandbox.shown`
    finds them): its program and every word naming an existing path, absolute."""
    base = cwd or os.getcwd()
    exe = command[0] if "/" in command[0] else shutil.which(command[0], path=path_env)
    words = [exe] if exe else []
    words += [w for w in command[1:] if w.startswith("/") or os.path.exists(os.path.join(base, w))]
    return [os.path.join(base, w) for w in words]


def refused(
    command: Sequence[str],
    cwd: str | None,
    program_folder: str | None,
    path_env: str | None = None,
    granted: Sequence[str] = (),
) -> tuple[str, str] | None:
    """``(path, where it leads)`` for the first path of ``command`` a symbolic link
    takes out of the bot's own folders, or ``None``."""
    folders = bot_folders(cwd, program_folder)
    for path in command_paths(command, cwd, path_env):
        target = leading_out(path, folders, granted)
        if target is not None:
            return os.path.normpath(path), target
    return None


def grant_lines(text: str) -> list[str]:
    """What each absolute grant of a tournament file resolved to, one line each: the
    operator's own paths are bound as they resolve now (a link to another folder
    shows that folder), which the start of a run says. Best effort: a file that
    loaded has these keys in this shape."""
    import tomllib

    try:
        bots = tomllib.loads(text).get("bots", [])
    except (tomllib.TOMLDecodeError, AttributeError):
        return []
    lines = []
    for bot in bots if isinstance(bots, list) else []:
        for field, how in (("sandbox_ro", "reads"), ("sandbox_rw", "reads and writes")):
            for written in bot.get(field, []) if isinstance(bot, dict) else []:
                path = os.path.expanduser(str(written))
                if os.path.isabs(path):
                    real = os.path.realpath(path)
                    said = f"{written!r}" + (f" (resolved: {real!r})" if real != path else "")
                    lines.append(f"arena: {bot.get('name')} {how} {said} ({field})")
    return lines
