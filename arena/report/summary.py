"""What a report says, computed once from the results database as a plain value.

Every output (terminal, Markdown, HTML) is drawn from one ``ReportData`` so that
they cannot disagree with each other, and so that tests can compare the numbers
they print with numbers computed here from the database. Nothing in this module
formats text for a reader; nothing in the writers reads the store.

What a bot wrote (fault details, stderr tails, ``info`` text) comes out with its
control characters as escapes (``arena/protocol/text.py``): the arena stores it so
since issue 22, and a store an older arena wrote is made safe here, on the way
into every report.
"""

from __future__ import annotations

import datetime as _dt
import itertools
import math
import os
import statistics
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import msgspec

from arena.analysis.store import AnalysisStore
from arena.analysis.summary import AnalysisSection, build_analysis
from arena.games import GameError, get_game
from arena.match.record import FAULT_REASONS, ActionRecord, GameRecord
from arena.protocol.text import visible
from arena.report.rounds import RoundsSection, build_rounds
from arena.stats.rating import JointFit, RatedRow, joint_fit
from arena.storage.rounds import read_rounds
from arena.storage.store import TournamentInfo

__all__ = [
    "BotStats",
    "CrossCell",
    "GameRow",
    "GameSource",
    "ReportData",
    "RoleStats",
    "Standing",
    "build_report",
]


@dataclass(frozen=True, slots=True)
class Standing(RatedRow):
    """One line of a report's standings; ``faults`` counts the games this player
    lost by a fault."""

    faults: int


@dataclass(frozen=True, slots=True)
class CrossCell:
    """The row player's points and games against the column player."""

    points: float
    games: int

    @property
    def score_pct(self) -> float | None:
        return None if self.games == 0 else 100.0 * self.points / self.games


@dataclass(frozen=True, slots=True)
class GameRow:
    """One stored game as the game list shows it; ``index`` is its 1-based stored order."""

    index: int
    key: str
    game: str
    variant: str
    players: tuple[str, str]
    score: float
    result: str
    reason: str
    detail: str
    faulty_player: str | None
    plies: int
    seconds: float
    opening: str
    ms: tuple[int, int]
    """Total thinking time of each player, from the action records."""
    figures: dict[str, str] = field(default_factory=dict)
    """What the game says of its final position (round scores, impacts...)."""
    stderr: tuple[str, str] = ("", "")
    """What each bot wrote (the first and last lines of its stderr, stray stdout lines
    marked ``[stdout]``), as the referee kept them."""


@dataclass(frozen=True, slots=True)
class RoleStats:
    """One bot's games in each role (player 0 and player 1: black and gold,
    attacker and defender), and the mean of each paired figure of the game
    (e.g. impact) for the bot and against it.

    ``points[r]``/``games[r]`` are its points and games as player ``r``;
    ``figures[label]`` is ``(mine, theirs)``, averaged over the games whose
    figure reads ``a-b`` in whole numbers.
    """

    player: str
    games: tuple[int, int]
    points: tuple[float, float]
    figures: dict[str, tuple[float, float]]

    def score_pct(self, role: int) -> float | None:
        n = self.games[role]
        return None if n == 0 else 100.0 * self.points[role] / n


@dataclass(frozen=True, slots=True)
class BotStats:
    """What a bot's search looked like, from the ``info`` lines it sent.

    ``moves`` counts the decisions it was asked for (forced ones, played by the
    referee, are left out); ``ms_per_move`` is its mean thinking time. ``depth``
    averages over the moves whose ``info`` gave a depth, and ``nodes_per_s`` is
    total nodes over the thinking time of the moves that reported nodes;
    ``playouts_per_s`` the same of a Monte-Carlo bot's ``playouts`` (protocol.md
    §2), kept apart because a playout is a whole simulated game, not a node.
    ``None`` means the bot never said.
    """

    player: str
    moves: int
    ms_per_move: float | None
    info_moves: int
    depth: float | None
    nodes_per_s: float | None
    playouts_per_s: float | None = None
    cpu_ms_per_move: float | None = None
    """Mean CPU time its cgroup used per move, over the moves that counted it (records
    without it, or a bot without a cgroup: ``None``). Beside ``ms_per_move``, the wall
    time charged, it shows a bot that waited (less CPU) or ran many threads (more)."""
    last_info: dict[str, object] | None = None
    """The last ``info`` it sent in the tournament: a sample of what it reports."""
    rtt_ms: float | None = None
    """A remote entrant's latency: the median round trip of its connection over its
    moves (``None``: a local bot)."""


@dataclass(frozen=True)
class ReportData:
    """Everything the reports show; plain values, independent of the store.

    ``first_move`` and ``first_move_error`` are the fitted Elo bonus of the first
    mover (player 0; in Kamisado, Black, who opens round 1) and its 95 % half-width;
    ``first_mover_points``/``games`` give the raw score behind it. ``crosstable``
    maps ``(row, column)`` to the row player's results against the column player,
    for every pair that met. ``faults`` maps ``(bot at fault, reason)`` to a count.
    """

    tournament: str
    created_at: str
    generated_at: str
    arena_version: str
    games: int
    players: tuple[str, ...]
    """In standings order."""
    standings: tuple[Standing, ...]
    first_move: float | None
    first_move_error: float | None
    first_mover_points: float
    crosstable: dict[tuple[str, str], CrossCell]
    faults: dict[tuple[str, str], int]
    fault_reasons: tuple[str, ...]
    reasons: dict[str, int]
    game_list: tuple[GameRow, ...]
    anchor: tuple[str, float] | None = None
    directory: str = ""
    game_names: tuple[str, ...] = field(default=())
    roles: tuple[str, str] = ("first", "second")
    """What the games call player 0 and 1 (``attacker``/``defender`` in Sekigahara);
    ``first``/``second`` when the tournament mixes games that name them differently."""
    bot_stats: tuple[BotStats, ...] = ()
    """In standings order."""
    figure_labels: tuple[str, ...] = ()
    """Every label of ``GameRow.figures`` in the game list, in first-seen order."""
    role_stats: tuple[RoleStats, ...] = ()
    """In standings order."""
    omitted_games: int = 0
    """Stored games that ``game_list`` leaves out (only the latest and the faulted
    ones are listed): counted in every table above, browsable with ``arena serve``."""
    analysis: AnalysisSection | None = None
    """The solver's analysis (``arena analyze``), when there is one."""
    analysis_note: str = ""
    """Why there is no analysis: not run yet, or the game has no solver."""
    rounds: RoundsSection | None = None
    """A Swiss's or knockout's rounds, standings with tie-breaks, bracket (``rounds.py``)."""

    @property
    def first_role(self) -> str:
        """How the text names player 0: its role, or "first mover"."""
        return "first mover" if self.roles == ("first", "second") else self.roles[0]

    @property
    def first_mover_score_pct(self) -> float | None:
        return None if self.games == 0 else 100.0 * self.first_mover_points / self.games

    def standing(self, player: str) -> Standing:
        for s in self.standings:
            if s.player == player:
                return s
        raise KeyError(player)


LIST_LATEST = 200
"""Games a report lists (with replays in report.html): the latest this many..."""
LIST_FAULTED = 200
"""...and the latest this many faulted games before them. The rest are counted,
and ``arena serve`` shows them all: a report stays small at any game count."""


class GameSource(Protocol):
    """What a report reads of a store: a :class:`Store`, or the web view's read-only
    views of one (``arena.web.store_view``)."""

    @property
    def tournament(self) -> TournamentInfo: ...

    def count(self) -> int: ...

    def items(self) -> Iterator[tuple[str, GameRecord]]:
        """``(key, record)`` of every game, in stored order."""
        ...


def build_report(
    store: GameSource,
    *,
    anchor: tuple[str, float] | None = None,
    directory: str | os.PathLike[str] = "",
    list_latest: int = LIST_LATEST,
    list_faulted: int = LIST_FAULTED,
    analysis: AnalysisStore | None = None,
) -> ReportData:
    """Read every game of ``store`` and compute the standings, tables and game list.

    Every stored game counts, faults included (a fault is a loss: a bot that
    crashes is weaker in the way that matters to a tournament). An ``anchor``
    ``(player, rating)`` fixes that player's rating instead of a pool average of 0;
    an anchor naming no player of this tournament is ignored rather than fatal,
    so a report can always be written. ``analysis`` (``analysis.sqlite``) adds
    the solver's figures and the listed games' marks.
    """
    # A tournament may be writing while we report: every pass reads the same
    # first ``count`` games (games are only ever appended), so the standings
    # match the game list. Records are streamed, never all held: a report of
    # 100,000 games costs time in proportion and memory for the listed ones.
    count = store.count()

    def items() -> Iterator[tuple[str, GameRecord]]:
        for key, r in itertools.islice(store.items(), count):
            yield visible(key), _shown_record(r)

    results: list[tuple[str, str, float]] = []
    faults: Counter[tuple[str, str]] = Counter()
    reason_counts: Counter[str] = Counter()
    game_names: dict[str, None] = {}
    variants: set[tuple[str, str]] = set()
    latest: deque[GameRow] = deque(maxlen=max(list_latest, 0))
    faulted: deque[GameRow] = deque(maxlen=max(list_faulted, 0))
    folder = Path(directory) if directory else getattr(store, "path", Path(".")).parent
    record = read_rounds(folder)
    by_key: dict[str, tuple[str, str, float]] = {}
    for i, (key, r) in enumerate(items()):
        results.append((r.players[0], r.players[1], float(r.score)))
        if record is not None:
            by_key[key] = results[-1]
        if r.faulty is not None:
            faults[(r.players[r.faulty], r.reason)] += 1
        reason_counts[r.reason] += 1
        game_names[r.game] = None
        variants.add((r.game, r.variant))
        row = _game_row(i + 1, key, r)
        if r.faulty is not None and list_faulted > 0 and i < count - list_latest:
            faulted.append(row)
        latest.append(row)

    players: list[str] = []
    for p0, p1, _ in results:
        for p in (p0, p1):
            if p not in players:
                players.append(p)

    fit: JointFit | None = None
    if results and len(players) >= 2:
        use_anchor = anchor if anchor is not None and anchor[0] in players else None
        try:
            fit = joint_fit(results, players=players, anchor=use_anchor)
        except ValueError:
            # The prior keeps the fit defined for any data; should it still fail,
            # the tables are worth writing without ratings.
            fit = None

    tally: dict[str, list[int]] = {p: [0, 0, 0] for p in players}
    cross: dict[tuple[str, str], list[float]] = {}
    for p0, p1, score in results:
        for me, other, mine in ((p0, p1, score), (p1, p0, 1.0 - score)):
            slot = 0 if mine == 1.0 else 1 if mine == 0.0 else 2
            tally[me][slot] += 1
            cell = cross.setdefault((me, other), [0.0, 0])
            cell[0] += mine
            cell[1] += 1
    fault_by_player: Counter[str] = Counter()
    for (bot, _), n in faults.items():
        fault_by_player[bot] += n

    def sort_key(p: str) -> tuple[float, float, str]:
        w, _, d = tally[p]
        games = sum(tally[p])
        pct = (w + 0.5 * d) / games if games else 0.0
        rating = fit.rating(p).value if fit is not None else 0.0
        return (-rating, -pct, p)

    order = sorted(players, key=sort_key)
    standings = []
    for i, p in enumerate(order):
        w, l, d = tally[p]
        est = fit.rating(p) if fit is not None else None
        nxt = order[i + 1] if i + 1 < len(order) else None
        los = fit.superiority(p, nxt) if fit is not None and nxt is not None else None
        standings.append(
            Standing(
                rank=i + 1,
                player=p,
                rating=_finite(est.value) if est else None,
                error=_finite(est.error) if est else None,
                games=w + l + d,
                wins=w,
                losses=l,
                draws=d,
                faults=fault_by_player[p],
                los_next=_finite(los) if los is not None else None,
            )
        )

    rows = tuple(sorted([*faulted, *latest], key=lambda g: g.index))
    role_names = {_roles(game, variant) for game, variant in variants}
    roles = role_names.pop() if len(role_names) == 1 else ("first", "second")
    stats = _bot_stats(order, (r for _, r in items()))
    section, note = _analysis(analysis, tuple(game_names), order, {row.key for row in rows}, items)
    reasons = dict(sorted(reason_counts.items(), key=lambda kv: (-kv[1], kv[0])))
    present = {reason for _, reason in faults}
    fault_reasons = tuple(r for r in FAULT_REASONS if r in present) + tuple(
        sorted(present - set(FAULT_REASONS))
    )
    info = store.tournament
    return ReportData(
        tournament=visible(info.name),
        created_at=visible(info.created_at),
        generated_at=_dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
        arena_version=visible(info.arena_version),
        games=len(results),
        players=tuple(order),
        standings=tuple(standings),
        first_move=_finite(fit.first_move) if fit else None,
        first_move_error=_finite(fit.first_move_error) if fit else None,
        first_mover_points=sum(s for _, _, s in results),
        crosstable={k: CrossCell(v[0], int(v[1])) for k, v in cross.items()},
        faults=dict(sorted(faults.items())),
        fault_reasons=fault_reasons,
        reasons=reasons,
        game_list=rows,
        anchor=anchor if fit is not None and fit.anchor is not None else None,
        directory=str(directory),
        game_names=tuple(game_names),
        roles=roles,
        bot_stats=stats,
        role_stats=_role_stats(order, (_game_row(i + 1, k, r) for i, (k, r) in enumerate(items()))),
        figure_labels=tuple(dict.fromkeys(label for row in rows for label in row.figures)),
        omitted_games=count - len(rows),
        analysis=section,
        analysis_note=note,
        rounds=None
        if record is None
        else build_rounds(record, by_key, {s.player: (s.rating, s.error) for s in standings}),
    )


def _analysis(
    store: AnalysisStore | None,
    game_names: tuple[str, ...],
    order: list[str],
    listed: set[str],
    items: Callable[[], Iterator[tuple[str, GameRecord]]],
) -> tuple[AnalysisSection | None, str]:
    """The analysis section, or why there is none."""
    solvers = []
    for name in game_names:
        try:
            game = get_game(name)
        except GameError:
            continue
        if game.solves is None:
            return None, f"{name} games are not analysed: {game.no_solver}."
        solvers.append(game.solves)
    if not solvers:
        return None, ""
    section = None
    if store is not None:
        section = build_analysis(
            ((i + 1, k, r) for i, (k, r) in enumerate(items())),
            store,
            order,
            solves=solvers[0],
            marked=listed,
        )
    if section is None:
        return None, "Not analysed yet: `arena analyze` solves every position of every game."
    return section, ""


def _roles(game: str, variant: str) -> tuple[str, str]:
    try:
        return get_game(game).new_state(variant).player_names()
    except GameError:
        return ("first", "second")


def _bot_stats(order: list[str], records: Iterable[GameRecord]) -> tuple[BotStats, ...]:
    moves: Counter[str] = Counter()
    ms: Counter[str] = Counter()
    cpu_ms: dict[str, float] = {}
    cpu_moves: Counter[str] = Counter()
    rtts: dict[str, list[float]] = {}
    infos: Counter[str] = Counter()
    depths: dict[str, list[int]] = {p: [] for p in order}
    counts = {key: Counter[str]() for key in ("nodes", "playouts")}
    count_ms = {key: Counter[str]() for key in ("nodes", "playouts")}
    last: dict[str, dict[str, object]] = {}
    for r in records:
        for a in r.actions:
            if a.forced or a.player not in (0, 1):
                continue
            name = r.players[a.player]
            moves[name] += 1
            ms[name] += a.ms
            if isinstance(a.cpu_ms, (int, float)) and a.cpu_ms >= 0:
                cpu_ms[name] = cpu_ms.get(name, 0.0) + a.cpu_ms
                cpu_moves[name] += 1
            rtt = a.rtt_ms
            if isinstance(rtt, (int, float)) and rtt >= 0:
                rtts.setdefault(name, []).append(rtt)
            info = _info(a)
            if not info:
                continue
            infos[name] += 1
            last[name] = info
            depth = info.get("depth")
            if isinstance(depth, int) and not isinstance(depth, bool):
                depths.setdefault(name, []).append(depth)
            for key, total in counts.items():
                n = info.get(key)
                if isinstance(n, int) and not isinstance(n, bool) and n >= 0:
                    total[name] += n
                    count_ms[key][name] += a.ms
    out = []
    for p in order:
        d = depths.get(p) or []
        out.append(
            BotStats(
                player=p,
                moves=moves[p],
                ms_per_move=ms[p] / moves[p] if moves[p] else None,
                info_moves=infos[p],
                depth=sum(d) / len(d) if d else None,
                nodes_per_s=_per_second(counts["nodes"][p], count_ms["nodes"][p]),
                playouts_per_s=_per_second(counts["playouts"][p], count_ms["playouts"][p]),
                last_info=_shown_info(last.get(p)),
                cpu_ms_per_move=cpu_ms[p] / cpu_moves[p] if cpu_moves[p] else None,
                rtt_ms=statistics.median(rtts[p]) if rtts.get(p) else None,
            )
        )
    return tuple(out)


def _per_second(count: int, ms: int) -> float | None:
    return 1000.0 * count / ms if ms > 0 else None


def _pair(text: str) -> tuple[int, int] | None:
    """A figure ``"12-7"`` as ``(12, 7)``; ``None`` for any other shape."""
    a, sep, b = text.partition("-")
    return (int(a), int(b)) if sep and a.isdigit() and b.isdigit() else None


def _role_stats(order: list[str], rows: Iterable[GameRow]) -> tuple[RoleStats, ...]:
    games: dict[str, list[int]] = {p: [0, 0] for p in order}
    points: dict[str, list[float]] = {p: [0.0, 0.0] for p in order}
    sums: dict[str, dict[str, list[float]]] = {p: {} for p in order}
    for g in rows:
        for role, name in enumerate(g.players):
            games.setdefault(name, [0, 0])[role] += 1
            points.setdefault(name, [0.0, 0.0])[role] += g.score if role == 0 else 1 - g.score
            for label, text in g.figures.items():
                pair = _pair(text)
                if pair is None:
                    continue
                acc = sums.setdefault(name, {}).setdefault(label, [0.0, 0.0, 0])
                acc[0] += pair[role]
                acc[1] += pair[1 - role]
                acc[2] += 1
    return tuple(
        RoleStats(
            player=p,
            games=(games[p][0], games[p][1]),
            points=(points[p][0], points[p][1]),
            figures={k: (v[0] / v[2], v[1] / v[2]) for k, v in sums[p].items() if v[2]},
        )
        for p in order
    )


def _shown_record(r: GameRecord) -> GameRecord:
    """``r`` with the names, reason and variant a reader is shown made visible (a
    store from elsewhere holds what its sender wrote); unchanged when clean."""
    fields = {"players": r.players, "reason": r.reason, "variant": r.variant}
    shown = {
        "players": [visible(p) for p in r.players],
        "reason": visible(r.reason),
        "variant": visible(r.variant),
    }
    if shown == fields:
        return r
    return msgspec.structs.replace(r, **shown)


def _info(a: ActionRecord) -> dict[str, object]:
    return a.info if isinstance(a.info, dict) else {}


def _shown_info(info: dict[str, object] | None) -> dict[str, object] | None:
    """An ``info`` with its text and PV as a reader may be shown them."""
    if info is None:
        return None
    shown = dict(info)
    if isinstance(shown.get("text"), str):
        shown["text"] = visible(str(shown["text"]))
    pv = shown.get("pv")
    if isinstance(pv, list):
        shown["pv"] = [visible(m) if isinstance(m, str) else m for m in pv]
    return shown


def _finite(x: float) -> float | None:
    """NaN or infinity would print as nonsense and break JSON; show "unknown" instead."""
    return x if math.isfinite(x) else None


def _game_row(index: int, key: str, r: GameRecord) -> GameRow:
    ms = [0, 0]
    for a in r.actions:
        if a.player in (0, 1):
            ms[a.player] += a.ms
    p0, p1 = r.players[0], r.players[1]
    return GameRow(
        index=index,
        key=key,
        game=r.game,
        variant=r.variant,
        players=(p0, p1),
        score=float(r.score),
        result=r.result,
        reason=r.reason,
        detail=visible(r.detail),
        faulty_player=None if r.faulty is None else r.players[r.faulty],
        plies=len(r.actions),
        seconds=max(r.ended_at - r.started_at, 0.0),
        opening=r.opening,
        ms=(ms[0], ms[1]),
        figures=r.figures(),
        stderr=(_text(r.stderr_tails, 0), _text(r.stderr_tails, 1)),
    )


def bot_output(record: GameRecord) -> list[str]:
    """What each bot of ``record`` wrote, made safe to show (the web view's replays)."""
    return [_text(record.stderr_tails, 0), _text(record.stderr_tails, 1)]


def _text(items: list[str], i: int) -> str:
    return visible(items[i], multiline=True) if i < len(items) and isinstance(items[i], str) else ""
