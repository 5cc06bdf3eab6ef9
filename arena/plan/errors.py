"""The one error of a tournament file, apart from the file's types so that the
modules :mod:`arena.plan.config` builds on can raise it too."""

from __future__ import annotations

__all__ = ["ConfigError"]


class ConfigError(ValueError):
    """A tournament file that cannot be used; the message is one line."""
