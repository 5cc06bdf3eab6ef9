"""What a bot wrote besides its messages: the head and the tail of its stderr, and
the stray lines of its stdout, bounded and made safe to show.

When a bot cannot start or crashes, the cause is usually in its first lines (a
JVM's "Error occurred during initialization of VM" and the reason after it, an
interpreter's "can't open file") while the last lines hold the stack frame
nearest the crash; so both ends are kept, with what lay between counted. A
runtime that fails before the bot's own code runs writes to stdout as often as
to stderr, and the arena reads stdout as protocol lines: such a line, and what
follows it, goes here too, marked ``[stdout]``. The text is for people (the
record, ``arena play``, ``check-bot``, the reports, the web view): bytes are
decoded leniently and control characters shown as escapes, never a Python
``b'...'`` repr.
"""

from __future__ import annotations

from collections import deque

from arena.protocol.text import visible

STDOUT_MARK = b"[stdout] "
"""Marks a stray stdout line among the stderr lines."""


def shown_line(raw: bytes, limit: int = 200) -> str:
    """A line a bot wrote, as a person may read it: decoded, escaped, cut at ``limit``
    characters (with a mark), in double quotes."""
    text = raw.decode("utf-8", errors="replace")
    cut = f" [... {len(text) - limit} more characters]" if len(text) > limit else ""
    return f'"{visible(text[:limit])}"{cut}'


class StderrTail:
    """The first and the last lines a bot wrote to stderr, bounded in lines, bytes
    and line length.

    The drain must never stop reading, or a chatty bot would block on a full
    pipe and lose on time for the arena's fault; so lines between the head and
    the tail are dropped (and counted) instead. The head (``head_lines`` within
    ``head_bytes``; none by default) keeps the first lines written since the
    last :meth:`clear`; the tail keeps the latest ``max_lines`` within
    ``max_bytes``. A line longer than ``line_bytes`` keeps its first and last
    halves around a ``[... N bytes cut]`` mark, so one huge line can neither
    push out every line before it nor cost more than its bound, even while it
    is still being written (no newline yet). :meth:`text` shows control
    characters as escapes (``arena/protocol/text.py``).
    """

    def __init__(
        self,
        max_lines: int = 64,
        max_bytes: int = 8192,
        *,
        head_lines: int = 0,
        head_bytes: int = 0,
        line_bytes: int | None = None,
    ) -> None:
        self.max_lines = max(1, max_lines)
        self.max_bytes = max(1, max_bytes)
        self.head_lines = max(0, head_lines)
        self.head_bytes = max(0, head_bytes)
        self.line_bytes = max(line_bytes or self.max_bytes // 8, 32)
        """Longest line kept whole: by default, at least eight long lines fit in the tail."""
        self._headed: list[bytes] = []
        self._head_size = 0
        self._head_open = self.head_lines > 0
        self._lines: deque[bytes] = deque()
        self._size = 0
        self._head = bytearray()  # the line being written: its start...
        self._end = bytearray()  # ...and its latest bytes
        self._cut = 0  # bytes of it between the two, discarded
        self.dropped = 0
        """Whole lines discarded to stay within bounds."""

    def feed(self, data: bytes) -> None:
        parts = data.split(b"\n")
        if len(parts) > 1:
            self._append(parts[0])
            self._push(self._take_partial())
            middle = parts[1:-1]
            while middle and self._head_open:  # the head takes the first lines
                self._append(middle.pop(0))
                self._push(self._take_partial())
            if len(middle) > self.max_lines:  # a flood: only the last ones can stay
                self.dropped += len(middle) - self.max_lines
                middle = middle[-self.max_lines :]
            for line in middle:
                self._append(line)
                self._push(self._take_partial())
        self._append(parts[-1])

    def feed_stdout(self, line: bytes) -> None:
        """A stray line of the bot's stdout (not a message), kept among the others."""
        if self._head or self._end:  # a stderr line being written ends here
            self._push(self._take_partial())
        self._append(STDOUT_MARK + line)
        self._push(self._take_partial())

    def _append(self, part: bytes) -> None:
        half = self.line_bytes // 2
        if len(self._head) < half:
            room = half - len(self._head)
            self._head += part[:room]
            part = part[room:]
        self._end += part
        if len(self._end) > half:
            excess = len(self._end) - half
            self._cut += excess
            del self._end[:excess]

    def _partial(self) -> bytes:
        mark = f" [... {self._cut} bytes cut] ".encode() if self._cut else b""
        return bytes(self._head) + mark + bytes(self._end)

    def _take_partial(self) -> bytes:
        line = self._partial()
        self._head.clear()
        self._end.clear()
        self._cut = 0
        return line

    def _push(self, line: bytes) -> None:
        if self._head_open:
            if (
                len(self._headed) < self.head_lines
                and self._head_size + len(line) + 1 <= self.head_bytes
            ):
                self._headed.append(line)
                self._head_size += len(line) + 1
                return
            self._head_open = False  # full: later lines go to the tail, in order
        self._lines.append(line)
        self._size += len(line) + 1
        while len(self._lines) > 1 and (
            len(self._lines) > self.max_lines or self._size > self.max_bytes
        ):
            self._size -= len(self._lines.popleft()) + 1
            self.dropped += 1

    def clear(self) -> None:
        self._headed.clear()
        self._head_size = 0
        self._head_open = self.head_lines > 0
        self._lines.clear()
        self._size = 0
        self._take_partial()
        self.dropped = 0

    def text(self) -> str:
        lines = list(self._lines)
        if self._head or self._end:
            lines.append(self._partial())

        def shown(part: list[bytes]) -> str:
            return visible(b"\n".join(part).decode("utf-8", errors="replace"), multiline=True)

        parts = [shown(self._headed)] if self._headed else []
        if self.dropped:
            parts.append(f"[... {self.dropped} earlier lines dropped]")
        if lines:
            parts.append(shown(lines))
        return "\n".join(parts)


__all__ = ["STDOUT_MARK", "StderrTail", "shown_line"]
