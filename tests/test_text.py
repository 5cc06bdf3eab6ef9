"""Bot-controlled text never carries a raw control or bidi character to a terminal."""

from arena.report.text import visible


def test_escape_sequences_made_visible() -> None:
    hostile = "\x1b]0;owned\x07\x1b[2J\x1b]52;c;aGk=\x07\x9b\x7f\u202e"
    shown = visible(hostile)
    assert all(ord(c) >= 0x20 and not 0x7F <= ord(c) <= 0x9F for c in shown)
    assert "\u202e" not in shown
    assert shown.startswith("\\x1b]0;owned\\x07")


def test_newline_kept_only_when_multiline() -> None:
    assert visible("a\nb") == "a\\x0ab"
    assert visible("a\nb\x1b", multiline=True) == "a\nb\\x1b"


def test_plain_text_unchanged() -> None:
    assert visible("alphabeta 1.2 — ünïcode") == "alphabeta 1.2 — ünïcode"
