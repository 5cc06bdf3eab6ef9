"""A Swiss's or knockout's rounds as text: the Markdown report's sections (round-by-
round tables, the Swiss standings with tie-breaks, the bracket as indented text)
and the lines the terminal shows."""

from __future__ import annotations

from collections.abc import Callable

from arena.report import fmt
from arena.report.rounds import BoardResult, RoundsSection, SwissRow, stage
from arena.storage.rounds import RoundsRecord

__all__ = ["board_line", "drawn_line", "markdown_rounds", "swiss_cells", "SWISS_HEADERS"]

SWISS_HEADERS = ["#", "player", "points", "Buchholz", "S-B", "direct", "byes", "Elo", "95%"]


def _plain(text: str) -> str:
    """A name safe on a line of its own: control characters (line breaks) dropped."""
    return "".join(ch for ch in text if ch.isprintable())


def swiss_cells(row: SwissRow, *, name: Callable[[str], str] = str) -> list[str]:
    player = name(row.player) + (" (withdrawn)" if row.withdrawn else "")
    return [
        str(row.rank),
        player,
        fmt.points(row.points),
        fmt.points(row.buchholz),
        fmt.points(row.sonneborn_berger),
        fmt.DASH if row.direct is None else fmt.points(row.direct),
        str(row.byes),
        fmt.elo(row.rating),
        fmt.error(row.error),
    ]


def board_line(board: BoardResult, *, name: Callable[[str], str] = str, seeds: bool = False) -> str:
    """``alpha 1½–½ beta`` (``2–0`` once played), ``alpha: bye``, ``? – ?`` unknown yet."""

    def who(player: str | None, seed: int | None) -> str:
        if player is None:
            return "?"
        return f"[{seed}] {name(player)}" if seeds and seed is not None else name(player)

    if board.bye:
        return f"{who(board.a, board.seeds[0])}: bye"
    if board.a is None and board.b is None:
        return "? – ?"
    left, right = who(board.a, board.seeds[0]), who(board.b, board.seeds[1])
    if board.games == 0 and board.winner is None:
        return f"{left} – {right}"
    score = f"{fmt.points(board.points[0])}–{fmt.points(board.points[1])}"
    line = f"{left} {score} {right}"
    if board.games < board.planned and board.winner is None:
        line += f" ({board.games}/{board.planned} games)"
    if board.winner is not None:
        line += f" → {name(board.winner)}"
        if board.how:
            line += f" ({board.how})"
    return line


def markdown_rounds(section: RoundsSection) -> list[str]:
    """The Markdown lines of the rounds: a Swiss's standings and rounds, or a
    knockout's bracket, each round in order."""
    out: list[str] = []
    if section.format == "swiss":
        out += [
            "## Swiss standings",
            "",
            f"Swiss of {section.rounds_total} rounds; points are game points, a bye scores "
            f"{fmt.points(section.bye_points)}. Ties are broken by Buchholz, Sonneborn–Berger "
            "(S-B) and the direct encounter; Elo is the joint fit over every game.",
            "",
            _row(SWISS_HEADERS),
            _row(["--:", ":--", *["--:"] * (len(SWISS_HEADERS) - 2)]),
            *(_row(swiss_cells(r, name=fmt.md_text)) for r in section.swiss),
            "",
            "## Rounds",
            "",
        ]
        for table in section.rounds:
            out += [f"### Round {table.number} of {section.rounds_total}", ""]
            out += [
                f"{i + 1}. {board_line(b, name=fmt.md_text)}" for i, b in enumerate(table.boards)
            ]
            out.append("")
        return out
    out += ["## Bracket", "", "```text"]
    for table in section.rounds:
        heading = stage(table.number, section.rounds_total)
        out.append(f"Round {table.number} of {section.rounds_total}: {heading}")
        out += [f"  {board_line(b, name=_plain, seeds=True)}" for b in table.boards]
    champion = section.champion
    out.append(f"champion: {_plain(champion)}" if champion else "champion: not yet decided")
    out += ["```", ""]
    rule = (
        f"Each match is {section.pairs} pair(s) of games with sides swapped; a tied match gets "
        f"up to {section.extra_pairs} extra pair(s), then the entrant with fewer faults in the "
        "match goes through, then the better seed. [n] is the seed."
    )
    return [*out, rule, ""]


def _row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def drawn_line(record: RoundsRecord) -> str:
    """The live views' line for the round being played: ``round 2 of 4: a – b,
    c – d; bye: e`` (a knockout names the stage and the seeds; a tied match's
    extra pair shows as its pair count)."""
    if not record.drawn:
        return ""
    knockout = record.format == "knockout"
    current = record.drawn[-1]  # a Swiss draws a round once the one before is played
    for r in record.drawn if knockout else ():
        if any(b.a is not None and b.b is not None and b.winner is None for b in r.boards):
            current = r
            break
    seed = {name: i + 1 for i, name in enumerate(record.entrants)}

    def who(name: str | None) -> str:
        if name is None:
            return "?"
        name = _plain(name)
        return f"[{seed[name]}] {name}" if knockout and name in seed else name

    pairs, byes = [], []
    for b in current.boards:
        if b.how == "bye":
            byes.append(who(b.a))
        elif b.a is not None or b.b is not None:
            extra = f" ({len(b.pair_keys)} pairs)" if len(b.pair_keys) > record.pairs else ""
            done = f" → {_plain(b.winner)}" if b.winner else ""
            pairs.append(f"{who(b.a)} – {who(b.b)}{extra}{done}")
    head = f"round {current.number} of {record.rounds}"
    if knockout:
        head += f" ({stage(current.number, record.rounds)})"
    line = f"{head}: {', '.join(pairs)}"
    if byes:
        line += f"; bye: {', '.join(byes)}"
    if record.champion:
        line += f"; champion: {_plain(record.champion)}"
    return line
