"""Built-in bots: each a standalone program speaking the protocol through ``arena.sdk``.

Installed as the package ``arena.bots`` (this folder, mapped in
``pyproject.toml``), so that the scripts import one another as
``arena.bots.NAME`` and no other project's or user's ``bots`` can stand in for
them. The arena never imports them: it runs them as programs, found by path
(``arena/plan/builtins.py`` lists them), like any other entrant.
"""
