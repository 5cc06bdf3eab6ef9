"""Remote entrants: a ``[[bots]]`` table with ``remote = true`` plays from its
author's machine through the gateway (``arena connect``) instead of being started
by the arena, and proves who it is with a token.

A token is a password, so it is kept to the one place that needs it: the gateway
of the arena process that loaded the file. The stored copy of the tournament file
and every config handed to worker processes or Ray actors carry :data:`REDACTED`
in its place (:func:`redact_text`, :func:`arena.plan.config.redact`), and no error
message repeats
one. ``token_env`` keeps it out of the file altogether.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Sequence
from typing import Annotated, Protocol

import msgspec
from msgspec import Meta

from arena.plan.errors import ConfigError

__all__ = [
    "REDACTED",
    "RemoteSettings",
    "entry_tokens",
    "redact_text",
    "remote_problem",
    "token_problem",
]

REDACTED = "redacted-by-arena"
"""What stands for a token in the stored file: a well-formed token (so the stored
file still parses), refused by :func:`entry_tokens` so that nobody can connect
with it."""

MIN_TOKEN = 16
MAX_TOKEN = 1024
"""A token's length bounds: long enough not to be guessed, short enough for the
gateway's first message to stay small."""
_TOKEN_RE = re.compile(rf"^[\x21-\x7e]{{{MIN_TOKEN},{MAX_TOKEN}}}$")
_ENV_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
TOKEN_HINT = (
    f"expected a token of {MIN_TOKEN} to {MAX_TOKEN} printable ASCII characters without "
    "spaces (python3 -c 'import secrets; print(secrets.token_urlsafe())' makes one)"
)


class Entry(Protocol):
    """What this module reads of a ``[[bots]]`` table (``arena.plan.config.BotConfig``,
    which builds on this module)."""

    @property
    def name(self) -> str: ...
    @property
    def remote(self) -> bool: ...
    @property
    def token(self) -> str | None: ...
    @property
    def token_env(self) -> str | None: ...


class Entries(Protocol):
    """What this module reads of a tournament (``arena.plan.config.TournamentConfig``)."""

    @property
    def bots(self) -> Sequence[Entry]: ...


class RemoteSettings(msgspec.Struct, forbid_unknown_fields=True, frozen=True, kw_only=True):
    """``[remote]``: how the arena waits for remote entrants and what it charges them."""

    connect_timeout: Annotated[float, Meta(gt=0, le=86400)] = 60.0
    """Seconds the pre-flight waits for a remote entrant to connect before it counts
    as an entrant that cannot start."""
    leeway_ms: Annotated[int, Meta(ge=0, le=60_000)] = 100
    """Milliseconds of each move's time not charged to a remote entrant (the same for
    all of them): the network's share of the round trip (protocol.md)."""
    reconnect_s: Annotated[float, Meta(ge=0, le=3600)] = 30.0
    """Seconds a connection lost mid-game may take to come back before the game is a
    ``disconnect`` fault; the entrant's clock runs meanwhile."""


def token_problem(token: str) -> str | None:
    """Why ``token`` cannot be one (never quoting it), else ``None``."""
    return None if _TOKEN_RE.match(token) else TOKEN_HINT


_LOCAL_ONLY = ("command", "args", "cwd", "env", "sandbox_ro", "sandbox_rw", "sandbox_net")
"""Keys of a bot the arena starts, meaningless for one that connects."""


def remote_problem(bot: Entry, clock: str) -> tuple[str, str] | None:
    """``(key, message)`` of the first mistake in a bot's remote settings, else ``None``.

    Only the shape is checked here (workers and Ray actors parse the redacted file
    too); that an environment variable is set is :func:`entry_tokens`'s to say.
    """
    if not bot.remote:
        for key in ("token", "token_env"):
            if getattr(bot, key) is not None:
                return key, "only a remote entrant has a token; add remote = true"
        return None
    for key in _LOCAL_ONLY:
        if getattr(bot, key):
            return key, (
                f"a remote entrant runs on its author's machine (arena connect): it has no {key}"
            )
    if (bot.token is None) == (bot.token_env is None):
        return "token", "a remote entrant needs either token = '...' or token_env = 'VARIABLE'"
    if bot.token is not None and (problem := token_problem(bot.token)):
        return "token", problem
    if bot.token_env is not None and not _ENV_RE.match(bot.token_env):
        return "token_env", f"expected the name of an environment variable, got {bot.token_env!r}"
    if clock == "cpu":
        return "remote", (
            "clock = 'cpu' cannot be measured on an author's machine; remote entrants "
            "play on the wall clock (clock = 'wall')"
        )
    return None


def entry_tokens(config: Entries, where: object) -> dict[str, bytes]:
    """Each remote entrant's token, read from the file or the environment now.

    A ``ConfigError`` (one line, naming the key, never the token) for a variable
    that is unset or holds no usable token, or for :data:`REDACTED` (a stored file
    run again: its entrants need tokens of their own).
    """
    tokens = {}
    for index, bot in enumerate(config.bots):
        if not bot.remote:
            continue
        key = f"{where}: bots[{index}] ({bot.name})"
        if bot.token_env is not None:
            token = os.environ.get(bot.token_env)
            if token is None:
                raise ConfigError(f"{key}.token_env: environment variable {bot.token_env} is unset")
            if problem := token_problem(token):
                raise ConfigError(f"{key}.token_env: {bot.token_env}: {problem}")
        else:
            token = bot.token or ""
        if token == REDACTED:
            raise ConfigError(
                f"{key}.token: this token was redacted when the results stored the file; "
                "give the entrant a token of its own"
            )
        tokens[bot.name] = token.encode()
    return tokens


_PIECE = re.compile(
    r"""(?P<comment>\#[^\n]*)
      | (?P<string>\"\"\"(?:[^\\]|\\.)*?\"\"\"\"{0,2}
                  | '''.*?''''{0,2}
                  | "(?:[^"\\\n]|\\.)*"
                  | '[^'\n]*')""",
    re.S | re.X,
)
"""TOML's comments and string literals, found left to right (a quote in a comment
or a ``#`` in a string is theirs)."""


def redact_text(text: str, config: Entries, where: object) -> str:
    """The tournament file as the store keeps it: every string literal whose value
    is a token written in the file replaced by :data:`REDACTED`.

    The result is checked rather than trusted: it must parse to the same values
    with the tokens replaced, and hold no token anywhere (a comment, another
    key's value). Otherwise a ``ConfigError`` says so: better no run than a
    token kept in a results folder that will be shared.
    """
    tokens = {b.token for b in config.bots if b.token is not None and b.token != REDACTED}
    if not tokens:
        return text

    def replace(match: re.Match[str]) -> str:
        literal = match["string"]
        if literal is None:
            return match[0]
        try:
            value = tomllib.loads(f"v = {literal}")["v"]
        except tomllib.TOMLDecodeError:
            return literal
        return f'"{REDACTED}"' if value in tokens else literal

    redacted = _PIECE.sub(replace, text)
    refusal = ConfigError(
        f"{where}: a token also appears outside its bot's token key (a comment or another "
        "value), where it cannot be kept out of the stored results; remove it there or "
        "use token_env"
    )
    try:
        before, after = tomllib.loads(text), tomllib.loads(redacted)
    except tomllib.TOMLDecodeError:
        raise refusal from None
    for bot in before.get("bots", []):
        if isinstance(bot, dict) and bot.get("token") in tokens:
            bot["token"] = REDACTED
    if before != after or any(token in redacted for token in tokens):
        raise refusal
    return redacted
