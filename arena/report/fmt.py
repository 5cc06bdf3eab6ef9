"""Number formats shared by every report, so the terminal, Markdown and HTML agree,
and the one escaper of text in Markdown (:func:`md_text`).

Unknown values (``None``: no games, or a rating the fit could not give) print
as an en dash rather than 0, which would claim something.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from markupsafe import Markup, escape

if TYPE_CHECKING:
    from collections.abc import Sequence

    from arena.analysis.summary import AnalysisSection, BotAnalysis, GameMarks, MistakeRow
    from arena.report.summary import (
        BotStats,
        GameRow,
        ReportData,
        RoleStats,
        Standing,
    )
    from arena.stats.rating import RatedRow

DASH = "–"

_MD_SPECIAL = re.compile(r"([`*\[\]<>&!|@])")
_MD_BACKSLASH = re.compile(r"\\(?=[!-/:-@\[-`{-~])")
"""A backslash that would escape the punctuation after it (``\\x1b`` shows as it is)."""
_AUTOLINK = re.compile(r"(?i)\b(https?|ftp|mailto|xmpp):|\b(www)\.")


def md_text(text: str) -> str:
    """``text`` as Markdown shows it literally, on one line: a name, a detail or an
    info line from a bot or a store, which must bring no HTML, image, link or
    code span into ``report.md`` or ``ratings.md``, nor split a table row or
    start a line of its own. Every character that could start such a thing is
    backslash-escaped (CommonMark shows the character itself), as is the colon
    or dot that would make an address a link; line breaks become spaces."""
    text = " ".join(text.splitlines()) if "\n" in text or "\r" in text else text
    text = _MD_SPECIAL.sub(r"\\\1", _MD_BACKSLASH.sub(r"\\\\", text))
    return _AUTOLINK.sub(lambda m: f"{m[1]}\\:" if m[1] else f"{m[2]}\\.", text)


def elo(value: float | None, *, signed: bool = False) -> str:
    """An Elo value to the nearest point."""
    if value is None:
        return DASH
    rounded = round(value)  # an int: no "-0"
    return f"{rounded:+d}" if signed else f"{rounded:d}"


def error(value: float | None) -> str:
    """The half-width of a 95 % interval, as ``±12``."""
    return DASH if value is None else f"±{value:.0f}"


def pct(value: float | None) -> str:
    """A percentage to one decimal."""
    return DASH if value is None else f"{value:.1f}%"


def prob(value: float | None) -> str:
    """A probability (LOS) as a percentage to one decimal."""
    return DASH if value is None else f"{100 * value:.1f}%"


def figures(values: dict[str, str], roles: tuple[str, str]) -> str:
    """A game's figures in one phrase, player 0's first as in the report's columns:
    ``impact 34-34, casualties 5-4 (attacker-defender)``; empty when it has none."""
    if not values:
        return ""
    return ", ".join(f"{label} {value}" for label, value in values.items()) + (
        f" ({roles[0]}-{roles[1]})"
    )


_CODE = re.compile(r"`([^`]+)`")


def code_html(text: str) -> Markup:
    """A note written for Markdown (``arena analyze`` in backticks) as HTML: escaped,
    each backtick span a ``<code>``, so no page shows raw Markdown."""
    return Markup(_CODE.sub(lambda m: f"<code>{m[1]}</code>", str(escape(text))))


def points(value: float) -> str:
    """Half points as ``2.5``, whole points as ``3``."""
    return f"{value:g}"


def seconds(value: float) -> str:
    return f"{value:.1f}s"


RATED_HEADERS = ["#", "player", "Elo", "95%", "games", "W-L-D", "score", "LOS next"]
STANDING_HEADERS = [*RATED_HEADERS, "faults"]


def rated_cells(r: RatedRow) -> list[str]:
    """A rated row as text, in the order of :data:`RATED_HEADERS` (a report's
    standings and a rating list add their own columns after these)."""
    return [
        str(r.rank),
        r.player,
        elo(r.rating),
        error(r.error),
        str(r.games),
        f"{r.wins}-{r.losses}-{r.draws}",
        pct(r.score_pct),
        prob(r.los_next),
    ]


def standing_cells(s: Standing, *, blank_zero_faults: bool = False) -> list[str]:
    """One standings row as text, in the order of :data:`STANDING_HEADERS`."""
    faults = "" if blank_zero_faults and not s.faults else str(s.faults)
    return [*rated_cells(s), faults]


def millis(value: float | None) -> str:
    """A mean thinking time: ``850 ms``, ``1.25 s``."""
    if value is None:
        return DASH
    if value < 10:
        return f"{value:.1f} ms"
    return f"{value:.0f} ms" if value < 1000 else f"{value / 1000:.2f} s"


def count(value: float | None) -> str:
    """A large rate with an SI suffix: ``950``, ``12.3k``, ``4.56M``."""
    if value is None:
        return DASH
    for limit, suffix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= limit:
            return f"{value / limit:.3g}{suffix}"
    return f"{value:.0f}"


def depth(value: float | None) -> str:
    return DASH if value is None else f"{value:.1f}"


def score(value: object) -> str:
    """An ``info`` score as the bot sent it, signed."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return DASH
    return f"{value:+g}"


STATS_HEADERS = [
    "player",
    "moves",
    "time/move",
    "CPU/move",
    "moves with info",
    "avg depth",
    "nodes/s",
    "playouts/s",
    "last info",
]

PV_MOVES = 8
"""A PV is cut to this many moves in tables (the replay shows it whole)."""


def info(value: dict[str, object] | None) -> str:
    """An ``info`` as ``depth 7, score +0.5, pv a1-a3 h8-h6``."""
    if not value:
        return DASH
    parts = []
    if isinstance(value.get("depth"), int):
        parts.append(f"depth {value['depth']}")
    if "score" in value:
        parts.append(f"score {score(value['score'])}")
    pv = value.get("pv")
    if isinstance(pv, list) and pv:
        more = " …" if len(pv) > PV_MOVES else ""
        parts.append("pv " + " ".join(str(m) for m in pv[:PV_MOVES]) + more)
    if isinstance(value.get("text"), str) and value["text"]:
        parts.append(str(value["text"])[:80])
    return ", ".join(parts) or DASH


def latency_line(stats: Sequence[BotStats]) -> str | None:
    """The remote entrants' latency in one sentence, or ``None`` if none played."""
    remote = [b for b in stats if b.rtt_ms is not None]
    if not remote:
        return None
    each = ", ".join(f"{b.player} {millis(b.rtt_ms)}" for b in remote)
    return f"Latency of the remote entrants (round trip, median over their moves): {each}."


def stats_cells(b: BotStats) -> list[str]:
    """One row of the search table, in the order of :data:`STATS_HEADERS`."""
    return [
        b.player,
        str(b.moves),
        millis(b.ms_per_move),
        millis(b.cpu_ms_per_move),
        str(b.info_moves),
        depth(b.depth),
        count(b.nodes_per_s),
        count(b.playouts_per_s),
        info(b.last_info),
    ]


def reason(g: GameRow) -> str:
    """The end reason, with the bot at fault if it was a fault."""
    return g.reason + (f" ({g.faulty_player})" if g.faulty_player else "")


def advantage_heading(data: ReportData) -> str:
    """ "First-move advantage", or in a game of roles, e.g. "Attacker's advantage"."""
    role = data.first_role
    if role in ("first mover", "black"):
        return "First-move advantage"
    return f"{role.capitalize()}'s advantage"


def role_headers(data: ReportData) -> list[str]:
    """The by-role table's columns: the player, each role, each paired figure."""
    return [
        "player",
        *(f"as {role}" for role in data.roles),
        *(f"{label} (own–opp.)" for label in data.figure_labels),
    ]


def role_cells(r: RoleStats, data: ReportData) -> list[str]:
    """One row of the by-role table: ``games, score`` per role, mean figures."""
    cells = [r.player]
    for role in (0, 1):
        n = r.games[role]
        cells.append(f"{n} games, {pct(r.score_pct(role))}" if n else DASH)
    for label in data.figure_labels:
        pair = r.figures.get(label)
        cells.append(DASH if pair is None else f"{pair[0]:.1f}–{pair[1]:.1f}")
    return cells


ANALYSIS_HEADERS = [
    "player",
    "decisions",
    "proven",
    "blunders",
    "per 100",
    "missed wins",
    "per 100",
    "won rounds converted",
    "wins from lost",
]
"""The Analysis table (``round`` is replaced by what the game's solver proves)."""


def analysis_headers(solves: str) -> list[str]:
    return [h.replace("round", solves) for h in ANALYSIS_HEADERS]


def rate(value: float | None) -> str:
    """Mistakes per 100 decisions."""
    return DASH if value is None else f"{value:.1f}"


def analysis_cells(b: BotAnalysis) -> list[str]:
    """One row of the Analysis table, in the order of :data:`ANALYSIS_HEADERS`."""
    converted = (
        f"{b.converted}/{b.won_parts} ({pct(100 * b.conversion)})"
        if b.conversion is not None
        else DASH
    )
    return [
        b.player,
        str(b.decisions),
        pct(None if b.proven_share is None else 100 * b.proven_share),
        str(b.blunders),
        rate(b.blunder_rate),
        str(b.missed),
        rate(b.missed_rate),
        converted,
        str(b.wins_from_lost),
    ]


def analysis_lead(a: AnalysisSection) -> str:
    """The sentence above the Analysis table: what was analysed, how well."""
    low, high = a.budgets
    budget = f"{low:g} ms" if low == high else f"{low:g}–{high:g} ms"
    share = pct(None if a.proven_share is None else 100 * a.proven_share)
    after = (
        ""
        if a.plies_after is None
        else f"; on average a {a.solves} went on {a.plies_after:.1f} plies after it was decided"
    )
    return (
        f"{a.games} of {a.total} games analysed by the exact {a.solves} solver at {budget} "
        f"a position: {share} of {a.positions:,} positions proven. "
        f"{plural(a.parts, a.solves)} ended, {a.decided_at_start} of them decided from their "
        f"first position{after}. {plural(a.blunders, 'blunder')}, "
        f"{plural(a.missed, 'missed win')}."
    )


def plural(n: int, noun: str) -> str:
    """``1 blunder``, ``2 blunders``, ``0 rounds``."""
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


def mistake_text(m: MistakeRow) -> str:
    kind = "a blunder" if m.blunder else "a missed win"
    return (
        f"game {m.index} ({m.players[0]} vs {m.players[1]}), ply {m.ply}: {m.player} played "
        f"{m.played}, {kind}; {m.best} wins"
    )


def marks_text(marks: GameMarks | None) -> str:
    """A game's mistakes in a few words, for the games table."""
    if marks is None:
        return "not analysed"
    parts = []
    if marks.blunders:
        parts.append(f"{len(marks.blunders)} blunder{'s' if len(marks.blunders) > 1 else ''}")
    if marks.missed:
        parts.append(f"{len(marks.missed)} missed win{'s' if len(marks.missed) > 1 else ''}")
    return ", ".join(parts)
