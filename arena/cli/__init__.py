"""The ``arena`` command: thin verbs, one module each, that parse arguments and
delegate (``app`` holds the group and its one-line errors, ``common`` the options
several verbs share, ``live`` what a running tournament shows). What a verb does
beyond that lives in the package that owns it (``plan``, ``tools``, ``tournament``...).

May import: everything (nothing imports it).

Importing the package registers every verb on :data:`main`.
"""

from arena.cli import (  # noqa: F401  (each module registers its verbs)
    analyze,
    check,
    openings,
    play,
    ratings,
    report,
    rules,
    run,
    serve,
    solve,
    sprt,
)
from arena.cli.app import main

__all__ = ["main"]
