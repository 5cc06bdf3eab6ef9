"""The rating list: one joint fit per game and match kind over every stored game.

The fit is :func:`arena.stats.rating.joint_fit`, the Bradley–Terry model with a fitted
first-move advantage that each tournament's report uses, so a list built from
one folder shows exactly that report's ratings. Everything here is plain numpy
on the groups of games :mod:`arena.ratinglist.collect` reduced each store to;
nothing here reads a record or prints. The pairings go to the fit as arrays
(:class:`arena.stats.rating.PairCounts`), each fit is kept by a digest of its
input (a fit of unchanged games is never made again), and a new fit starts from
the ratings of the last ones (a list one tournament longer is a few Newton steps
from its optimum).
"""

from __future__ import annotations

import datetime as _dt
import functools
import hashlib
import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from arena.protocol.text import visible
from arena.ratinglist.collect import (
    CACHE_DIR,
    CACHE_NAME,
    DAY,
    TC_CLASSES,
    RatingInputError,
    StoreGames,
    find_stores,
    read_stores,
    without_copies,
)
from arena.ratinglist.players import Aliases
from arena.stats.rating import JointFit, PairCounts, Player, RatedRow, joint_fit
from arena.storage.safefile import read_own, refuse_link, write_atomic

FITS_NAME = "fits.json"
"""The fits cache, beside the stores' in the cache folder."""

__all__ = ["HISTORY_POINTS", "Entry", "RatingList", "RatingTable", "Row", "build_list"]

HISTORY_POINTS = 12
"""Most points of the history: after each tournament while there are at most this
many, else after every 2nd, 4th, 8th... one (and the last). A power-of-two stride
keeps the earlier points where they were as tournaments are added, so their fits
come from the cache."""


@dataclass(frozen=True, slots=True)
class Row(RatedRow):
    """One player of a list: the tournaments it played in and when it last played."""

    tournaments: tuple[str, ...]
    last_played: str


@dataclass(frozen=True, slots=True)
class Entry:
    """Where a player's games are: an entry of one stored tournament."""

    directory: str
    tournament: str
    entry: str


@dataclass
class RatingTable:
    """One list (a game and match kind): the standings, the first-move advantage,
    the history and the crosstable."""

    game: str
    variant: str
    rows: list[Row]
    games: int
    first_move: float | None
    first_move_error: float | None
    anchor: tuple[str, float] | None
    history_points: list[tuple[str, str]]
    """``(tournament, date)`` after which each history column was fitted."""
    history: dict[str, list[tuple[float, float] | None]]
    """Per player, ``(rating, error)`` at each history point (``None``: not yet played)."""
    pairs: _Pairs | None = field(default=None, repr=False)
    """The first-mover results the crosstable is made of (when first asked for:
    tens of thousands of cells, of which the outputs show 30 × 30 or none)."""
    where: dict[str, list[Entry]] = field(default_factory=dict)

    @functools.cached_property
    def crosstable(self) -> dict[tuple[str, str], tuple[float, int]]:
        """``(row, column) -> (row's points, games)`` for every pair that met."""
        return _crosstable(self.pairs) if self.pairs is not None else {}

    @property
    def name(self) -> str:
        return f"{self.game} {self.variant}".strip()

    @property
    def slug(self) -> str:
        return f"{self.game}-{self.variant}".strip("-")

    def row(self, player: str) -> Row:
        for r in self.rows:
            if r.player == player:
                return r
        raise KeyError(player)


@dataclass
class RatingList:
    tables: list[RatingTable]
    notes: list[str]
    """One line each: stores rated by entry name, folders skipped, games dropped."""
    stores: int
    games: int

    def table(self, slug: str) -> RatingTable:
        for t in self.tables:
            if t.slug == slug:
                return t
        raise KeyError(slug)


def _date(ts: float) -> str:
    if not ts or not math.isfinite(ts):
        return ""
    return _dt.datetime.fromtimestamp(ts, _dt.UTC).date().isoformat()


def parse_since(text: str | None) -> float | None:
    if text is None:
        return None
    try:
        day = _dt.date.fromisoformat(text)
    except ValueError:
        raise RatingInputError(f"--since must be a date such as 2026-01-31, got {text!r}") from None
    return _dt.datetime(day.year, day.month, day.day, tzinfo=_dt.UTC).timestamp()


def default_cache_dir(paths: Sequence[Path]) -> Path | None:
    """``<first results folder>/.ratings-cache`` (beside the tournaments), or none
    when that folder cannot be written."""
    if not paths:
        return None
    root = paths[0] if not (paths[0] / "games.sqlite").is_file() else paths[0].parent
    return root / CACHE_DIR if os.access(root, os.W_OK) else None


def _read_all(
    paths: Sequence[Path], cache_dir: Path | None, skip_bad: bool, notes: list[str]
) -> list[StoreGames]:
    """Every store under ``paths``, in order; a bad one raises (the first, in
    order) or, with ``skip_bad``, is one note."""
    jobs: list[Path | RatingInputError] = []
    for path in paths:
        try:
            jobs += find_stores([path])
        except RatingInputError as exc:
            jobs.append(exc)
    folders = list(dict.fromkeys(job for job in jobs if isinstance(job, Path)))
    read = dict(zip(folders, read_stores(folders, cache_dir), strict=True))
    stores: list[StoreGames] = []
    for job in jobs:
        got = job if isinstance(job, RatingInputError) else read[job]
        if isinstance(got, RatingInputError):
            if not skip_bad:
                raise got
            notes.append(f"skipped: {got}")
        else:
            stores.append(got)
    return stores


class _FitCache:
    """Fits by their input's hash, kept in the cache folder: history points and the
    final fit of an unchanged list are not computed again."""

    def __init__(self, cache_dir: Path | None) -> None:
        self.path = cache_dir / FITS_NAME if cache_dir is not None else None
        # Each fit as JSON, by its input's hash (see ``fit`` for the fields).
        self.old: dict[str, dict[str, Any]] = {}
        self.new: dict[str, dict[str, Any]] = {}
        self._start: dict[Player, float] | None = None
        data = read_own(self.path) if self.path is not None else None
        if data is not None:  # a cache planted in a received folder is not read
            try:
                self.old = msgspec.json.decode(data, type=dict[str, dict[str, Any]])
            except msgspec.DecodeError:
                self.old = {}

    def fit(self, pairs: _Pairs, anchor: tuple[str, float] | None) -> dict[str, Any]:
        h = hashlib.blake2b(digest_size=16)
        h.update(json.dumps([pairs.players, anchor]).encode())
        h.update(pairs.digest)
        key = h.hexdigest()
        got = self.old.get(key) or self.new.get(key)
        if got is None:
            fit: JointFit = joint_fit(
                pairs.counts, players=pairs.players, anchor=anchor, start=self.start
            )
            got = {
                "players": list(pairs.players),
                "ratings": list(fit.ratings),
                "errors": list(fit.errors),
                "first_move": fit.first_move,
                "first_move_error": fit.first_move_error,
            }
            got["order_los"] = _los_pairs(fit)
            self._start = None  # the next fit starts from this one
        self.new[key] = got
        return got

    @property
    def start(self) -> dict[Player, float]:
        """Where a new fit starts: the ratings of the fits made or read so far (a
        list one tournament longer is fitted from near its optimum)."""
        if self._start is None:
            self._start = {}
            for got in [*self.old.values(), *self.new.values()]:
                ratings = zip(got.get("players", []), got.get("ratings", []), strict=False)
                self._start.update((p, r) for p, r in ratings if isinstance(r, float))
        return self._start

    def save(self) -> None:
        """Keep the fits this list used (those of an older list go), if they changed."""
        if self.path is None or self.new.keys() == self.old.keys():
            return
        try:
            refuse_link(self.path.parent, folder=True)
            self.path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(self.path, msgspec.json.encode(self.new), unique=True)
        except OSError:
            pass


def _los_pairs(fit: JointFit) -> dict[str, float]:
    """LOS of each player over the next in rating order: all a list shows of it."""
    order = sorted(range(len(fit.players)), key=lambda i: -fit.ratings[i])
    pairs = [(fit.players[a], fit.players[b]) for a, b in zip(order, order[1:], strict=False)]
    return {f"{a}\0{b}": los for (a, b), los in zip(pairs, fit.superiorities(pairs), strict=True)}


def build_list(
    paths: Sequence[str | os.PathLike[str]],
    *,
    aliases: Aliases | None = None,
    anchor: tuple[str, float] | None = None,
    min_games: int = 0,
    since: float | None = None,
    tc: str | None = None,
    skip_bad: bool = False,
    cache_dir: Path | None | bool = True,
) -> RatingList:
    """Rate every game of every tournament under ``paths``, one list per game and
    match kind. ``since`` (Unix seconds, a UTC midnight as :func:`parse_since`
    gives) keeps the games started on that day or later; games are kept by day,
    so a ``since`` within a day counts from the next midnight. ``cache_dir=True``
    keeps the cache beside the results; ``None`` or ``False`` keeps none."""
    aliases = aliases or Aliases()
    roots = [Path(p) for p in paths]
    if tc is not None and tc not in TC_CLASSES:
        raise RatingInputError(f"--tc must be one of {', '.join(TC_CLASSES)}, got {tc!r}")
    cdir = default_cache_dir(roots) if cache_dir is True else (cache_dir or None)
    if cdir is not None:  # a link planted in a received folder: refused, not followed
        refuse_link(cdir, folder=True)
        refuse_link(cdir / CACHE_NAME)
        refuse_link(cdir / FITS_NAME)
    notes: list[str] = []
    stores = _read_all(roots, cdir, skip_bad, notes)
    if not stores:
        raise RatingInputError(f"no tournament results in {', '.join(map(str, roots))}")
    # A folder given twice, or copied, is one tournament (same uid): each game key
    # of a uid counts once.
    stores = without_copies(stores)

    names: dict[str, int] = {}
    tour_names: list[str] = []
    tour_created: list[str] = []
    list_keys: list[tuple[str, str]] = []
    chunks: list[np.ndarray] = []  # per store: its groups the filters keep
    sides: list[np.ndarray] = []  # per store: each side's player code
    side_entries: list[Entry] = []  # every store's sides, one after another
    variants: list[np.ndarray] = []  # per store: each variant's list
    for s in stores:
        if not s.identified and s.count:
            notes.append(
                f"{s.directory}: stored without the bots' identities (an older arena); "
                "its players are rated by entry name"
            )
        if not s.count:
            continue
        player_codes = np.array(
            [
                names.setdefault(aliases.resolve(s.tournament, entry, s.labels[i]), len(names))
                for i, (entry, _) in enumerate(s.sides)
            ],
            dtype=np.int32,
        )
        tour_names.append(s.tournament)
        tour_created.append(s.created_at)
        for v in s.variants:
            if (s.game, v) not in list_keys:
                list_keys.append((s.game, v))
        variants.append(np.array([list_keys.index((s.game, v)) for v in s.variants], np.int32))
        g = s.groups
        if any(s.unrated):  # entries that never started: their games are left out
            unrated = np.array(s.unrated, bool)[s.label_of]
            out = unrated[g["p0"]] | unrated[g["p1"]]
            if out.any():
                never = ", ".join(s.entries[i] for i, u in enumerate(s.unrated) if u)
                notes.append(
                    f"{s.directory}: {int(g['count'][out].sum())} games left out: "
                    f"{never} never gave an identity (never started), so is not rated"
                )
                g = g[~out]
        if since is not None:
            g = g[g["day"] >= math.ceil(since / DAY)]
        if tc is not None:
            g = g[g["tc"] == TC_CLASSES.index(tc)]
        chunks.append(g)
        sides.append(player_codes[s.label_of])
        directory = str(s.directory)
        side_entries += [
            Entry(directory, s.tournament, s.entries[label]) for label in s.label_of.tolist()
        ]
    cols, where = _columns(chunks, sides, variants, max(len(list_keys), 1))
    player_names = list(names)
    if not len(cols["count"]):
        raise RatingInputError("no games match (check --since and --tc)")
    selfplay = cols["p0"] == cols["p1"]
    if selfplay.any():
        dropped = int(cols["count"][selfplay].sum())
        notes.append(f"{dropped} games left out: the aliases made both players one")
        cols = {k: v[~selfplay] for k, v in cols.items()}

    fits = _FitCache(cdir)
    tables = []
    anchor_used = anchor is None
    for li, (game, variant) in enumerate(list_keys):
        sel = cols["list"] == li
        if not sel.any():
            continue
        t = {k: v[sel] for k, v in cols.items()}
        if min_games > 0:
            counts = np.bincount(
                np.concatenate([t["p0"], t["p1"]]),
                weights=np.concatenate([t["count"], t["count"]]),
                minlength=len(player_names),
            )
            ok = counts >= min_games
            keep = ok[t["p0"]] & ok[t["p1"]]
            t = {k: v[keep] for k, v in t.items()}
            if not len(t["p0"]):
                continue
        table = _table(game, variant, t, player_names, (tour_names, tour_created), anchor, fits)
        listed = {r.player for r in table.rows}
        table.where = {
            player_names[p]: list(dict.fromkeys(side_entries[x] for x in found))
            for (l2, p), found in where.items()
            if l2 == li and player_names[p] in listed
        }
        if anchor is not None and table.anchor is not None:
            anchor_used = True
        tables.append(table)
    fits.save()
    if not tables:
        raise RatingInputError(f"no player has {min_games} games (--min-games)")
    if anchor is not None and not anchor_used:
        raise RatingInputError(f"--anchor: no player named {anchor[0]!r} in any list")
    return RatingList(
        tables=tables,
        notes=[visible(n) for n in notes],  # they quote stores: shown, never obeyed
        stores=len(stores),
        games=sum(x.games for x in tables),
    )


def _columns(
    chunks: list[np.ndarray], sides: list[np.ndarray], variants: list[np.ndarray], lists: int
) -> tuple[dict[str, np.ndarray], dict[tuple[int, int], list[int]]]:
    """Every store's groups as one set of :data:`_COLUMNS`, with each store's
    sides and variants turned into the list's players and lists in one go; and
    where each player's games are: ``(list, player) -> [side]`` (sides numbered
    store after store, as ``sides`` has them)."""
    if not chunks:
        return {k: np.zeros(0, np.int64) for k in _COLUMNS}, {}
    g = np.concatenate(chunks)
    lengths = [len(c) for c in chunks]
    side_base = np.repeat(np.cumsum([0] + [len(x) for x in sides[:-1]]), lengths)
    variant_base = np.repeat(np.cumsum([0] + [len(x) for x in variants[:-1]]), lengths)
    player = np.concatenate(sides)
    side0, side1 = side_base + g["p0"], side_base + g["p1"]
    listed = np.concatenate(variants)[variant_base + g["variant"]]
    cols = {
        "p0": player[side0],
        "p1": player[side1],
        "half": g["half"],
        "count": g["count"],
        "day": g["day"],
        "tour": np.repeat(np.arange(len(chunks), dtype=np.int32), lengths),
        "list": listed,
    }
    used = np.unique(np.concatenate([side0, side1]) * lists + np.concatenate([listed, listed]))
    where: dict[tuple[int, int], list[int]] = {}
    for side, li in zip((used // lists).tolist(), (used % lists).tolist(), strict=True):
        where.setdefault((li, int(player[side])), []).append(side)
    return cols, where


_COLUMNS = ("p0", "p1", "half", "count", "day", "tour", "list")
"""Per group of games, across stores: the players (codes of the list's names),
player 0's half points, how many games, the UTC day they started, the
tournament and the list (game and variant) it belongs to."""


def _reduce(t: dict[str, np.ndarray], n: int) -> dict[str, np.ndarray]:
    """One row per (tournament, first mover, second mover, result) with its count:
    every table below (and each history point's fit) is computed from those."""
    key = ((t["tour"].astype(np.int64) * n + t["p0"]) * n + t["p1"]) * 3 + t["half"]
    uniq, inverse = np.unique(key, return_inverse=True)
    counts = np.bincount(inverse.ravel(), weights=t["count"], minlength=len(uniq))
    rest, half = np.divmod(uniq, 3)
    rest, p1 = np.divmod(rest, n)
    tour, p0 = np.divmod(rest, n)
    return {"tour": tour, "p0": p0, "p1": p1, "half": half, "count": counts.astype(np.int64)}


@dataclass
class _Pairs:
    """First-mover results per ordered pairing, ready for the fit: ``players`` are
    the names involved (sorted), ``counts`` index them, ``digest`` identifies the
    content (the fit cache's key). ``a``/``b`` are the pairings' name codes."""

    players: list[str]
    counts: PairCounts
    digest: bytes
    a: np.ndarray
    b: np.ndarray
    names: list[str]


def _pair_index(r: dict[str, np.ndarray], n: int) -> tuple[np.ndarray, np.ndarray]:
    """The ordered pairings (``first * n + second``) of reduced rows, and each
    row's pairing: computed once for a table and every history point."""
    uniq, inverse = np.unique(r["p0"] * n + r["p1"], return_inverse=True)
    return uniq, inverse.ravel()


def _pairs(
    r: dict[str, np.ndarray],
    sel: np.ndarray | None,
    names: list[str],
    index: tuple[np.ndarray, np.ndarray],
) -> _Pairs:
    """The pairings of the rows ``sel`` keeps (all: ``None``), ready for the fit."""
    n = len(names)
    uniq, inverse = index
    count = r["count"] if sel is None else np.where(sel, r["count"], 0)
    # One pass: per pairing, the first mover's losses, draws and wins (half points 0, 1, 2).
    tally = np.bincount(inverse * 3 + r["half"], weights=count, minlength=3 * len(uniq))
    tally = tally.reshape(len(uniq), 3).astype(np.int64)
    met = tally.sum(axis=1) > 0
    losses, draws, wins = tally[met].T
    pairing = uniq[met]
    a, b = pairing // n, pairing % n
    present = np.zeros(n, bool)
    present[a] = present[b] = True
    order = sorted(np.flatnonzero(present).tolist(), key=names.__getitem__)
    position = np.zeros(n, np.intp)
    position[order] = np.arange(len(order))
    first, second = position[a], position[b]
    players = [names[k] for k in order]
    h = hashlib.blake2b(digest_size=16)
    h.update(json.dumps(players).encode())
    for x in (first, second, wins, losses, draws):
        h.update(np.ascontiguousarray(x, dtype=np.int32).tobytes())
    counts = PairCounts(first, second, wins, losses, draws)
    return _Pairs(players, counts, h.digest(), a, b, names)


def _table(
    game: str,
    variant: str,
    t: dict[str, np.ndarray],
    names: list[str],
    tournaments: tuple[list[str], list[str]],
    anchor: tuple[str, float] | None,
    fits: _FitCache,
) -> RatingTable:
    """``tournaments`` are their names and creation times, by tournament code."""
    tour_names, created = tournaments
    n = len(names)
    games = int(t["count"].sum())
    # Rows come store by store, so each tournament's rows are one run of them.
    runs = np.flatnonzero(np.r_[True, t["tour"][1:] != t["tour"][:-1]])
    last_day = np.zeros(max(len(tour_names), 1), np.int64)
    first_day = np.full(max(len(tour_names), 1), np.iinfo(np.int64).max)
    if len(runs):
        last_day[t["tour"][runs]] = np.maximum.reduceat(t["day"], runs)
        first_day[t["tour"][runs]] = np.minimum.reduceat(t["day"], runs)
    # The order they started: by first day (of the games kept), then creation.
    started = sorted(range(len(tour_names)), key=lambda x: (first_day[x], created[x], x))
    r = _reduce(t, n)
    pairings = _pair_index(r, n)
    pairs = _pairs(r, None, names, pairings)
    players = pairs.players
    use_anchor = anchor if anchor is not None and anchor[0] in players else None
    fit = fits.fit(pairs, use_anchor) if len(players) >= 2 else None

    wins = np.zeros(n, np.int64)
    losses = np.zeros(n, np.int64)
    draws = np.zeros(n, np.int64)
    for side, me in ((0, r["p0"]), (1, r["p1"])):
        mine = r["half"] if side == 0 else 2 - r["half"]
        for h, acc in ((2, wins), (0, losses), (1, draws)):
            acc += np.bincount(me, weights=r["count"] * (mine == h), minlength=n).astype(np.int64)
    tours: dict[int, set[int]] = {}
    last = np.zeros(n, np.int64)
    both = np.unique(
        np.concatenate([r["p0"], r["p1"]]) * len(last_day) + np.concatenate([r["tour"], r["tour"]])
    )
    player_of, tour_of = np.divmod(both, len(last_day))
    np.maximum.at(last, player_of, last_day[tour_of])
    for p, tour in zip(player_of.tolist(), tour_of.tolist(), strict=True):
        tours.setdefault(p, set()).add(tour)

    index = {name: i for i, name in enumerate(names)}
    rating = dict.fromkeys(players, None)
    error = dict.fromkeys(players, None)
    if fit is not None:
        for i, p in enumerate(players):
            rating[p], error[p] = _finite(fit["ratings"][i]), _finite(fit["errors"][i])
    order = sorted(players, key=lambda p: (-(rating[p] or 0.0), p))
    rows = []
    los = fit["order_los"] if fit is not None else {}
    for i, p in enumerate(order):
        k = index[p]
        nxt = order[i + 1] if i + 1 < len(order) else None
        rows.append(
            Row(
                rank=i + 1,
                player=p,
                rating=rating[p],
                error=error[p],
                games=int(wins[k] + losses[k] + draws[k]),
                wins=int(wins[k]),
                losses=int(losses[k]),
                draws=int(draws[k]),
                los_next=_finite(los.get(f"{p}\0{nxt}")) if nxt is not None else None,
                tournaments=tuple(sorted({tour_names[x] for x in tours.get(k, ())})),
                last_played=_date(float(last[k] * DAY)),
            )
        )

    points, history = _history(
        r, (names, pairings), tour_names, started, last_day, anchor, fits, order
    )
    return RatingTable(
        game=game,
        variant=variant,
        rows=rows,
        games=games,
        first_move=_finite(fit["first_move"]) if fit else None,
        first_move_error=_finite(fit["first_move_error"]) if fit else None,
        anchor=use_anchor,
        history_points=points,
        history=history,
        pairs=pairs,
    )


def _crosstable(pairs: _Pairs) -> dict[tuple[str, str], tuple[float, int]]:
    """``(row, column) -> (row's points, games)`` against each other, both colours."""
    c = pairs.counts
    names = pairs.names
    n = len(names)
    games = c.wins + c.losses + c.draws
    cell = np.concatenate([pairs.a * n + pairs.b, pairs.b * n + pairs.a])
    points = np.concatenate([c.wins + c.draws / 2, c.losses + c.draws / 2])
    uniq, inverse = np.unique(cell, return_inverse=True)
    inverse = inverse.ravel()
    total_points = np.bincount(inverse, weights=points, minlength=len(uniq))
    total_games = np.bincount(inverse, weights=np.concatenate([games, games]), minlength=len(uniq))
    return {
        (names[x // n], names[x % n]): (pt, int(g))
        for x, pt, g in zip(uniq.tolist(), total_points.tolist(), total_games.tolist(), strict=True)
    }


def _history(
    r: dict[str, np.ndarray],
    pairings: tuple[list[str], tuple[np.ndarray, np.ndarray]],
    tour_names: list[str],
    started: list[int],
    last_day: np.ndarray,
    anchor: tuple[str, float] | None,
    fits: _FitCache,
    order: list[str],
) -> tuple[list[tuple[str, str]], dict[str, list[tuple[float, float] | None]]]:
    """Every player's rating after each tournament (in the order they ``started``),
    each point a joint fit of every game up to it. ``pairings`` are the names
    and :func:`_pair_index` of ``r``."""
    names, index = pairings
    present = set(r["tour"].tolist())
    ordered = [x for x in started if x in present]
    stride = 1
    while math.ceil(len(ordered) / stride) > HISTORY_POINTS:
        stride *= 2
    marks = [i for i in range(len(ordered)) if (i + 1) % stride == 0]
    if not marks or marks[-1] != len(ordered) - 1:
        marks.append(len(ordered) - 1)
    rank = np.zeros(len(tour_names), np.int64)
    for i, x in enumerate(ordered):
        rank[x] = i
    tour_rank = rank[r["tour"]]
    points: list[tuple[str, str]] = []
    history: dict[str, list[tuple[float, float] | None]] = {p: [] for p in order}
    for m in marks:
        pairs = _pairs(r, tour_rank <= m, names, index)
        players = pairs.players
        use_anchor = anchor if anchor is not None and anchor[0] in players else None
        fit = fits.fit(pairs, use_anchor) if len(players) >= 2 else None
        x = ordered[m]
        points.append((tour_names[x], _date(float(last_day[x] * DAY))))
        got = {}
        if fit is not None:
            got = {p: (fit["ratings"][i], fit["errors"][i]) for i, p in enumerate(players)}
        for p in order:
            history[p].append(got.get(p))
    return points, history


def _finite(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None
