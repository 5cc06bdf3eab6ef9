"""Bot-controlled text made safe for a terminal or a Markdown report.

A bot's stderr, identity and option names reach the operator's terminal; raw escape
sequences there could set the window title, clear the screen or write the clipboard
(OSC 52). Every control character (C0, DEL, C1) and every bidi override/isolate is
shown as a visible escape instead, so the operator sees what the bot sent.
"""

from __future__ import annotations

import re

_BIDI = "\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069"
_UNSAFE = re.compile(f"[\x00-\x1f\x7f-\x9f{_BIDI}]")
_UNSAFE_KEEP_NL = re.compile(f"[\x00-\x09\x0b-\x1f\x7f-\x9f{_BIDI}]")


def _show(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def visible(s: str, *, multiline: bool = False) -> str:
    """Return s with control and bidi characters escaped; newlines kept if multiline."""
    return (_UNSAFE_KEEP_NL if multiline else _UNSAFE).sub(_show, s)
