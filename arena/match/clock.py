"""Time controls and game clocks.

A :class:`TimeControl` is a value parsed from a short text, so a tournament
config, a game record and the wire all carry the same string. A :class:`Clock`
applies it to one game for both players; in a match of several rounds (a
Kamisado match to 3, 7 or 15 points, a Sekigahara campaign) the same clock
runs across all rounds, nothing is reset between them.

Inside, times are ``trio.current_time()`` seconds (floats); the wire uses
integer milliseconds, which :meth:`Clock.remaining_ms` provides. The clock never
reads the time itself: callers pass ``now``, which keeps it a pure value that
tests drive without a real or mock clock, and lets the referee charge exactly the
interval the engine layer measured (request written -> answer read).

Text syntax (all numbers are seconds, decimals allowed)::

    60+0.5              60 s for the game, +0.5 s after each own move
    60                  sudden death, no increment
    40/60+0.5           60 s for each 40 own moves (refilled after the 40th,
                        80th, ...), plus the increment
    movetime=0.5        0.5 s per move, nothing banked (alias: 0.5/move)
    60+0.5 margin=0.1   any of the above with a tolerance other than 50 ms

The margin is extra time tolerated before a time forfeit: an answer that takes
up to ``remaining + margin`` is accepted (the clock then shows zero plus the
increment). It absorbs pipe and scheduling latency, not thinking.

What a move is charged (``clock`` of a tournament): ``wall``, the time from the
request written to the answer read; or ``cpu``, the CPU time the bot's cgroup used
over that same interval (every process and core of the bot: two cores busy for a
second are two seconds), so a result does not depend on the machine's load. A bot
charged CPU time could sleep for ever, so it also has a wall-clock ceiling: it
loses on time when its CPU time exceeds the remaining time plus the margin, or when
its answer takes more than :data:`CPU_CEILING` times that in wall time. Where the
CPU time is not counted (no cgroup), the wall time is charged.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from decimal import Decimal

DEFAULT_MARGIN = 0.05
"""Seconds tolerated beyond the remaining time before a forfeit."""

CPU_CEILING = 3.0
"""With CPU time charged, the wall time an answer may take, as a multiple of the budget."""

MAX_SECONDS = 1_000_000
"""Largest time in a control (about 11.5 days): beyond it milliseconds on the
wire would outgrow what bots parse as integers, and no game needs it."""

MAX_MOVES = 10_000
"""Largest number of moves in a ``MOVES/BASE`` period."""

_NUM = r"(\d+(?:\.\d*)?|\.\d+)"
_BANKED = re.compile(rf"(?:(\d+)/)?{_NUM}(?:\+{_NUM})?")
_MOVETIME = re.compile(rf"movetime={_NUM}|{_NUM}/move")
_MARGIN = re.compile(rf"margin={_NUM}")


class TimeControlError(ValueError):
    """A time control text or value that cannot be used; the message says why."""


def _fmt(x: float) -> str:
    """Shortest text that parses back to exactly ``x`` (``60``, ``0.1``)."""
    if x == int(x):
        return str(int(x))
    return format(Decimal(repr(x)), "f")  # never an exponent, which the syntax lacks


@dataclass(frozen=True, slots=True)
class TimeControl:
    """How much time each player has. Immutable; ``str()`` gives the canonical text.

    Either banked time (``base`` seconds, ``increment`` per move, optionally
    refilled every ``moves`` moves) or a fixed ``movetime`` per move.
    """

    base: float = 0.0
    increment: float = 0.0
    moves: int | None = None
    movetime: float | None = None
    margin: float = DEFAULT_MARGIN

    def __post_init__(self) -> None:
        for name in ("base", "increment", "margin"):
            value = getattr(self, name)
            if not math.isfinite(value) or value < 0:
                raise TimeControlError(f"{name} must be a finite number >= 0, got {value!r}")
            if value > MAX_SECONDS:
                raise TimeControlError(f"{name} must be at most {MAX_SECONDS} s, got {value:g}")
        if self.movetime is not None:
            if not math.isfinite(self.movetime) or self.movetime <= 0:
                raise TimeControlError(f"movetime must be > 0 seconds, got {self.movetime!r}")
            if self.movetime > MAX_SECONDS:
                raise TimeControlError(
                    f"movetime must be at most {MAX_SECONDS} s, got {self.movetime:g}"
                )
            if self.base or self.increment or self.moves is not None:
                raise TimeControlError("movetime cannot be combined with base, increment or moves")
        else:
            if self.base <= 0:
                raise TimeControlError(f"base time must be > 0 seconds, got {self.base!r}")
            if self.moves is not None and not 1 <= self.moves <= MAX_MOVES:
                raise TimeControlError(
                    f"moves per period must be between 1 and {MAX_MOVES}, got {self.moves!r}"
                )

    @classmethod
    def parse(cls, text: str) -> TimeControl:
        """Parse the syntax in the module docstring; errors quote the bad part."""
        parts = text.split()
        if not parts:
            raise TimeControlError("empty time control; expected e.g. '60+0.5' or 'movetime=1'")
        margin = DEFAULT_MARGIN
        for extra in parts[1:]:
            m = _MARGIN.fullmatch(extra)
            if not m:
                raise TimeControlError(
                    f"unknown time control option {extra!r} in {text!r}; expected 'margin=SECONDS'"
                )
            margin = float(m.group(1))
        head = parts[0]
        if m := _MOVETIME.fullmatch(head):
            return cls(movetime=float(m.group(1) or m.group(2)), margin=margin)
        if m := _BANKED.fullmatch(head):
            moves, base, inc = m.groups()
            return cls(
                base=float(base),
                increment=float(inc) if inc else 0.0,
                moves=int(moves) if moves else None,
                margin=margin,
            )
        raise TimeControlError(
            f"cannot parse time control {head!r}; expected 'BASE[+INC]', 'MOVES/BASE[+INC]' "
            "or 'movetime=SECONDS' (all in seconds)"
        )

    def __str__(self) -> str:
        if self.movetime is not None:
            text = f"movetime={_fmt(self.movetime)}"
        else:
            text = _fmt(self.base)
            if self.moves is not None:
                text = f"{self.moves}/{text}"
            if self.increment:
                text += f"+{_fmt(self.increment)}"
        if self.margin != DEFAULT_MARGIN:
            text += f" margin={_fmt(self.margin)}"
        return text


class Clock:
    """Both players' clocks for one game (across all its rounds).

    Use: ``deadline = clock.start(p, t0)`` when the request is on its way, then
    ``elapsed_ms, flagged = clock.stop(p, t1)`` when the answer is in. A flagged
    player has lost on time; the clock keeps its state for the record.
    """

    def __init__(self, control: TimeControl, charge: str = "wall") -> None:
        self.control = control
        self.charge = charge
        """``wall`` or ``cpu``: which time :meth:`stop` charges (the module doc)."""
        initial = control.movetime if control.movetime is not None else control.base
        self._remaining = [initial, initial]
        self._moves_made = [0, 0]
        self._running: int | None = None
        self._started_at = 0.0
        self.flagged: int | None = None
        """The player who ran out of time, if any."""

    @property
    def running(self) -> int | None:
        """The player whose clock runs, ``None`` between requests."""
        return self._running

    def remaining(self, player: int) -> float:
        """Seconds left for ``player`` (for movetime: the time per move), not running."""
        return self._remaining[player]

    def remaining_ms(self, player: int) -> int:
        """Wire form of :meth:`remaining`: whole milliseconds, rounded down."""
        return int(self._remaining[player] * 1000)

    def moves_to_go(self, player: int) -> int | None:
        """Own moves left in the current period (``moves/base`` controls), else ``None``."""
        period = self.control.moves
        return None if period is None else period - self._moves_made[player] % period

    def budget(self, player: int) -> float:
        """Seconds ``player`` may take for the next answer without being flagged.

        This is the remaining time plus the margin: the timeout to give the engine.
        """
        return self._remaining[player] + self.control.margin

    def wall_budget(self, player: int) -> float:
        """Wall seconds the next answer may take: the budget, or with CPU time charged
        :data:`CPU_CEILING` times it (the engine's timeout)."""
        budget = self.budget(player)
        return budget * CPU_CEILING if self.charge == "cpu" else budget

    def start(self, player: int, now: float) -> float:
        """Start ``player``'s clock at ``now``; return the forfeit deadline (wall time)."""
        if self._running is not None:
            raise RuntimeError(f"clock of player {self._running} is already running")
        self._running = player
        self._started_at = now
        return now + self.wall_budget(player)

    def deadline(self) -> float | None:
        """The forfeit deadline (wall time) of the running request, ``None`` if none runs."""
        if self._running is None:
            return None
        return self._started_at + self.wall_budget(self._running)

    def stop(self, player: int, now: float, cpu: float | None = None) -> tuple[int, bool]:
        """Stop ``player``'s clock at ``now``: charge the time, add increments.

        ``cpu`` is the CPU seconds the bot used for the answer, charged instead of the
        wall time when the clock charges CPU time. Returns ``(charged_ms, flagged)``.
        Flagged means the charged time exceeded remaining time plus margin (or the
        answer came after the wall-clock ceiling); within the margin the clock shows
        zero and the game goes on.
        """
        if self._running != player:
            raise RuntimeError(f"clock of player {player} is not running")
        self._running = None
        wall = max(0.0, now - self._started_at)
        elapsed = max(0.0, cpu) if self.charge == "cpu" and cpu is not None else wall
        elapsed_ms = round(elapsed * 1000)
        flagged = elapsed > self.budget(player) or wall > self.wall_budget(player)
        if flagged:
            self.flagged = player
        tc = self.control
        if tc.movetime is not None:
            return elapsed_ms, flagged
        left = max(0.0, self._remaining[player] - elapsed)
        self._moves_made[player] += 1
        if tc.moves is not None and self._moves_made[player] % tc.moves == 0:
            left += tc.base
        self._remaining[player] = left + tc.increment
        return elapsed_ms, flagged


__all__ = ["CPU_CEILING", "DEFAULT_MARGIN", "Clock", "TimeControl", "TimeControlError"]
