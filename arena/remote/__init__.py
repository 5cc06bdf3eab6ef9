"""The author's end of a remote entrant: ``arena connect`` runs the bot on this
machine, in the same sandbox as a local bot, and carries the protocol's lines
between it and an arena's gateway, reconnecting by itself after a drop.

May import: :mod:`arena.engine` (the bot's process and sandbox, as every engine
runs one) and :mod:`arena.protocol` (the lines and the gateway's messages). Knows
nothing of tournaments, rules or results: the arena keeps those.
"""
