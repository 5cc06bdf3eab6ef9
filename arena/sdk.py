"""The bot SDK under its stable name: ``from arena.sdk import run``.

Bot authors import this path; the SDK itself lives in :mod:`arena.protocol.sdk`,
beside the messages it speaks. Importing it loads neither trio nor the arena's
orchestration, so a bot starts quickly.

May import: :mod:`arena.protocol`.
"""

from arena.protocol.sdk import Bot, Request, log, run, serve

__all__ = ["Bot", "Request", "log", "run", "serve"]
