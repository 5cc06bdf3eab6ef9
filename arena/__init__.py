"""Kamisado Arena: a tournament system for bots playing abstract games."""

__version__ = "0.1.0"
