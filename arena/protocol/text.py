"""Text a bot controls, made safe to show on a terminal or in a Markdown report.

A bot's identity (name, author, version, option names), its ``info`` lines, its
stderr and the details of its faults reach the operator's terminal and
``report.md``; raw escape sequences there could set the window title, clear the
screen or write the clipboard (OSC 52), and bidi overrides could make a line read
other than it is. :func:`visible` shows every control character (C0, DEL, C1) and
every bidi override/isolate as a visible escape instead (``\\x1b``, ``\\u202e``),
so the operator sees what the bot sent and the terminal interprets none of it.

It is applied where a bot's bytes become the arena's strings (the protocol
decoder, the engine's stderr tail and fault details), so everything built from
them is safe wherever it is shown; and again where text is read back from a store
an older arena wrote (reports, the rating list). It is idempotent: its output
holds no character it would escape.
"""

from __future__ import annotations

import re

_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_UNSAFE = re.compile(f"[\x00-\x1f\x7f-\x9f{_BIDI}]")
_UNSAFE_KEEP_NL = re.compile(f"[\x00-\x09\x0b-\x1f\x7f-\x9f{_BIDI}]")

MAYBE_UNSAFE_JSON = re.compile(
    rb"\\u|\x7f|\xc2[\x80-\x9f]|\xd8\x9c|\xe2\x80[\x8e\x8f\xaa-\xae]|\xe2\x81[\xa6-\xa9]"
)
"""Whether a JSON line may decode to a string :func:`visible` would change: a
``\\u`` escape (JSON cannot hold a raw C0 character in a string), DEL, or the
UTF-8 of a C1 or bidi character. Most lines have none, so the decoder skips the
per-string work for them."""


def _show(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(s: str, *, multiline: bool = False) -> str:
    """``s`` with control and bidi characters escaped; newlines kept if ``multiline``
    (a ``\\r`` before one is dropped: a line ending, not a carriage return)."""
    if multiline:
        return _UNSAFE_KEEP_NL.sub(_show, s.replace("\r\n", "\n"))
    return _UNSAFE.sub(_show, s)


__all__ = ["MAYBE_UNSAFE_JSON", "visible"]
