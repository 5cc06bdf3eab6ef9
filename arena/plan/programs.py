"""Where a bot's program is: a program word looked up as a shell would (a path, or
a bare word on the ``PATH``), a command line made absolute, and the folder its
program lies in (which the bot starts in and may read).

The one lookup of tournament files (:mod:`arena.plan.config`) and of bots named on
the command line (:mod:`arena.plan.entrants`, ``arena play``, ``check-bot``).
"""

from __future__ import annotations

import os
import shlex
import shutil
from pathlib import Path

from arena.plan.own_files import OwnFilesError, refused

__all__ = ["absolute", "find_program", "is_path", "leads_out", "program_command", "program_folder"]


def leads_out(path: str, target: str, hint: str = " (an absolute sandbox_ro grants more)") -> str:
    """Why a symbolic link out of a bot's folder is refused, as one line's end."""
    return (
        f"{path!r} is a symbolic link leading out of the bot's folder, to {target!r}: "
        f"a bot is shown only its own files{hint}"
    )


def is_path(word: str) -> bool:
    """A program word with a slash is a path; a bare word is looked up on the PATH."""
    return os.sep in word or bool(os.altsep and os.altsep in word)


def find_program(word: str, folders: list[Path], path_env: str | None) -> str | None:
    """The absolute path of the program ``word`` names, or ``None`` if there is none.

    A path (:func:`is_path`) is taken as it is when absolute, else relative to each
    of ``folders`` in turn, and must be a file (whether it may be executed is for
    the caller to say); a bare word is looked up on ``path_env`` (``None``: the
    arena's own ``PATH``) as a shell would. The one lookup of tournament files
    and of bots named on the command line.
    """
    if not is_path(word):
        found = shutil.which(word, path=path_env)
        return None if found is None else os.path.abspath(found)
    candidates = [Path(word)] if os.path.isabs(word) else [f / word for f in folders]
    for candidate in candidates:
        if candidate.is_file():
            # abspath, not resolve(): a virtualenv's python is a symlink that must
            # stay one to find its environment.
            return os.path.normpath(os.path.abspath(candidate))
    return None


def program_command(argv: list[str], base: Path) -> tuple[list[str], str | None]:
    """A command line given relative to ``base``, made absolute, and its program's folder.

    For ``arena play``: its bots, like a tournament's without ``cwd``, start in
    their program's folder (or in none), not in the operator's folder. A symbolic
    link on it leading out of that folder is an :class:`OwnFilesError`.
    """
    first = argv[0]
    if os.sep in first and not os.path.isabs(first):
        first = os.path.normpath(base.absolute() / first)
    command = [first, *(absolute(base, w) for w in argv[1:])]
    folder = program_folder(command)
    found = refused(command, folder, folder)
    if found is not None:
        raise OwnFilesError(f"bot {shlex.join(argv)!r}: {leads_out(*found, hint='')}")
    return command, folder


def absolute(base: Path, word: str) -> str:
    """``word`` as an absolute path if it names a file or folder relative to ``base``
    (not resolved: a symbolic link stays one, for :mod:`arena.plan.own_files` to see)."""
    if word.startswith("-") or os.path.isabs(word) or not (base / word).exists():
        return word
    return os.path.normpath(base.resolve() / word)


def program_folder(argv: list[str]) -> str | None:
    """The folder of a command's program, ``None`` for a system folder (which no bot
    is given; see ``_resolve_bot`` in :mod:`arena.plan.config`).

    The folder the program lies in, not the one a symbolic link leads to: an
    entrant's ``bot.py`` leading elsewhere does not make elsewhere its folder.
    """
    from arena.engine.sandbox import SYSTEM

    files = [w for w in argv[1:] if os.path.isabs(w) and os.path.isfile(w)]
    exe = argv[0] if os.path.isabs(argv[0]) else shutil.which(argv[0])
    program = files[0] if files else exe
    if program is None:
        return None
    folder = os.path.realpath(os.path.dirname(os.path.abspath(program)))
    if any(folder == s or folder.startswith(s + "/") for s in SYSTEM):
        return None
    return folder
