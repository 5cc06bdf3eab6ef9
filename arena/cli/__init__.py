"""The ``arena`` command: thin verbs, one module each, that parse arguments and
delegate (``app`` holds the group and its one-line errors, ``common`` the options
several verbs share, ``live`` what a running tournament shows). What a verb does
beyond that lives in the package that owns it (``plan``, ``tools``, ``tournament``...).

May import: everything (nothing imports it).

A verb's module registers it on :data:`main` when the verb is first asked for
(``app.VERBS`` says which module holds which verb).
"""

from arena.cli.app import main

__all__ = ["main"]
