"""The bot wire protocol: messages as msgspec Structs, line framing, the bot SDK and
the JSON Schemas generated from the messages.

May import: :mod:`arena.games` (the SDK decodes observations through a game's
public interface). Nothing here imports trio at module level, so a bot that uses the
SDK starts fast; the engine and the referee build on this, never the other way.
"""
