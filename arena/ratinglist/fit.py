"""The rating list: one joint fit per game and match kind over every stored game.

The fit is :func:`arena.stats.rating.joint_fit`, the Bradley–Terry model with a fitted
first-move advantage that each tournament's report uses, so a list built from
one folder shows exactly that report's ratings. Everything here is plain numpy
on the columns :mod:`arena.ratinglist.collect` reduced each store to; nothing
here reads a record or prints.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import math
import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from arena.ratinglist.collect import (
    CACHE_DIR,
    TC_CLASSES,
    RatingInputError,
    StoreGames,
    find_stores,
    read_store,
)
from arena.ratinglist.players import Aliases
from arena.report.summary import RatedRow
from arena.stats.rating import JointFit, joint_fit

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
    crosstable: dict[tuple[str, str], tuple[float, int]]
    """``(row, column) -> (row's points, games)`` for every pair that met."""
    where: dict[str, list[Entry]] = field(default_factory=dict)

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
    stores: list[StoreGames] = []
    for path in paths:
        try:
            folders = find_stores([path])
        except RatingInputError as exc:
            if not skip_bad:
                raise
            notes.append(f"skipped: {exc}")
            continue
        for folder in folders:
            try:
                stores.append(read_store(folder, cache_dir))
            except RatingInputError as exc:
                if not skip_bad:
                    raise
                notes.append(f"skipped: {exc}")
    return stores


class _FitCache:
    """Fits by their input's hash, kept in the cache folder: history points and the
    final fit of an unchanged list are not computed again."""

    def __init__(self, cache_dir: Path | None) -> None:
        self.path = cache_dir / "fits.json" if cache_dir is not None else None
        self.old: dict[str, dict] = {}
        self.new: dict[str, dict] = {}
        self._start: dict[str, float] | None = None
        if self.path is not None and self.path.is_file():
            try:
                self.old = json.loads(self.path.read_text())
            except (OSError, ValueError):
                self.old = {}

    def fit(self, tallies: dict, players: list[str], anchor: tuple[str, float] | None) -> dict:
        h = hashlib.blake2b(digest_size=16)
        h.update(json.dumps([players, anchor]).encode())
        digest = getattr(tallies, "digest", None)
        h.update(digest or json.dumps(sorted(tallies.items())).encode())
        key = h.hexdigest()
        got = self.old.get(key) or self.new.get(key)
        if got is None:
            fit: JointFit = joint_fit(tallies, players=players, anchor=anchor, start=self.start)
            got = {
                "players": list(players),
                "ratings": list(fit.ratings),
                "errors": list(fit.errors),
                "first_move": fit.first_move,
                "first_move_error": fit.first_move_error,
            }
            got["order_los"] = _los_pairs(fit)
        self.new[key] = got
        return got

    @property
    def start(self) -> dict[str, float]:
        """Where a new fit starts: the ratings of the fits made or read so far (a
        list one tournament longer is fitted from near its optimum)."""
        if self._start is None:
            self._start = {}
            for got in [*self.old.values(), *self.new.values()]:
                self._start.update(zip(got.get("players", []), got["ratings"], strict=False))
        return self._start

    def save(self) -> None:
        if self.path is None:
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_name(f"fits.{os.getpid()}.tmp")
            tmp.write_text(json.dumps(self.new))
            os.replace(tmp, self.path)
        except OSError:
            pass


def _los_pairs(fit: JointFit) -> dict[str, float]:
    """LOS of each player over each other by rating order's neighbour, computed when
    the order is known; kept whole only for small lists."""
    order = sorted(range(len(fit.players)), key=lambda i: -fit.ratings[i])
    return {
        f"{fit.players[a]}\0{fit.players[b]}": float(fit.los[a, b])
        for a, b in zip(order, order[1:], strict=False)
    }


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
    match kind. ``cache_dir=True`` keeps the cache beside the results; ``None`` or
    ``False`` keeps none."""
    aliases = aliases or Aliases()
    roots = [Path(p) for p in paths]
    if tc is not None and tc not in TC_CLASSES:
        raise RatingInputError(f"--tc must be one of {', '.join(TC_CLASSES)}, got {tc!r}")
    cdir = default_cache_dir(roots) if cache_dir is True else (cache_dir or None)
    notes: list[str] = []
    stores = _read_all(roots, cdir, skip_bad, notes)
    if not stores:
        raise RatingInputError(f"no tournament results in {', '.join(map(str, roots))}")

    # A folder given twice, or copied, is one tournament (same uid): each game key
    # of a uid counts once. Copies differ only in how many games they hold.
    by_uid: dict[str, set[str]] = {}
    copies = Counter(s.uid for s in stores)
    names: dict[str, int] = {}
    tour_names: list[str] = []
    tour_dirs: list[str] = []
    parts: dict[str, list[np.ndarray]] = {
        k: [] for k in ("p0", "p1", "half", "when", "tour", "list")
    }
    list_keys: list[tuple[str, str]] = []
    where: dict[tuple[int, str], dict[Entry, None]] = {}
    for s in stores:
        if not s.identified and s.count:
            notes.append(
                f"{s.directory}: stored without the bots' identities (an older arena); "
                "its players are rated by entry name"
            )
        if copies[s.uid] > 1:  # only copies need their game keys compared
            seen = by_uid.setdefault(s.uid, set())
            keep = np.fromiter((k not in seen for k in s.keys.tolist()), bool, s.count)
            seen.update(s.keys[keep].tolist())
        else:
            keep = np.ones(s.count, bool)
        if not keep.any():
            continue
        player_codes = np.array(
            [
                names.setdefault(aliases.resolve(s.tournament, entry, s.labels[i]), len(names))
                for i, (entry, _) in enumerate(s.sides)
            ],
            dtype=np.int32,
        )
        t_index = len(tour_names)
        tour_names.append(s.tournament)
        tour_dirs.append(str(s.directory))
        variant_codes = []
        for v in s.variants:
            key = (s.game, v)
            if key not in list_keys:
                list_keys.append(key)
            variant_codes.append(list_keys.index(key))
        vmap = np.array(variant_codes or [0], dtype=np.int32)
        mask = keep
        if since is not None:
            mask = mask & (s.when >= since)
        if tc is not None:
            mask = mask & (s.tc == TC_CLASSES.index(tc))
        p0, p1 = player_codes[s.p0[mask]], player_codes[s.p1[mask]]
        parts["p0"].append(p0)
        parts["p1"].append(p1)
        parts["half"].append(s.half[mask])
        parts["when"].append(s.when[mask])
        parts["tour"].append(np.full(int(mask.sum()), t_index, np.int32))
        lists = vmap[s.variant[mask]]
        parts["list"].append(lists)
        used = np.zeros(len(s.sides), bool)
        used[s.p0[mask]] = True
        used[s.p1[mask]] = True
        store_lists = np.unique(lists).tolist()
        for i, (entry, _) in enumerate(s.sides):
            if not used[i]:
                continue
            player = int(player_codes[i])
            for li in store_lists:
                where.setdefault((int(li), str(player)), {})[
                    Entry(str(s.directory), s.tournament, entry)
                ] = None
    player_names = list(names)
    cols = {k: np.concatenate(v) if v else np.zeros(0) for k, v in parts.items()}
    total = len(cols["p0"])
    if total == 0:
        raise RatingInputError("no games match (check --since and --tc)")
    selfplay = cols["p0"] == cols["p1"]
    if selfplay.any():
        notes.append(f"{int(selfplay.sum())} games left out: the aliases made both players one")
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
            counts = np.bincount(np.concatenate([t["p0"], t["p1"]]), minlength=len(player_names))
            ok = counts >= min_games
            keep = ok[t["p0"]] & ok[t["p1"]]
            t = {k: v[keep] for k, v in t.items()}
            if not len(t["p0"]):
                continue
        table = _table(game, variant, t, player_names, tour_names, anchor, fits)
        table.where = {
            player_names[int(p)]: list(entries)
            for (l2, p), entries in where.items()
            if l2 == li and player_names[int(p)] in {r.player for r in table.rows}
        }
        if anchor is not None and table.anchor is not None:
            anchor_used = True
        tables.append(table)
    fits.save()
    if not tables:
        raise RatingInputError(f"no player has {min_games} games (--min-games)")
    if not anchor_used:
        raise RatingInputError(f"--anchor: no player named {anchor[0]!r} in any list")  # type: ignore[index]
    return RatingList(
        tables=tables, notes=notes, stores=len(stores), games=sum(x.games for x in tables)
    )


def _reduce(t: dict[str, np.ndarray], n: int) -> dict[str, np.ndarray]:
    """One row per (tournament, first mover, second mover, result) with its count:
    a million games become some thousands of rows, and every table below (and each
    history point's fit) is computed from those."""
    key = ((t["tour"].astype(np.int64) * n + t["p0"]) * n + t["p1"]) * 3 + t["half"]
    uniq, counts = np.unique(key, return_counts=True)
    rest, half = np.divmod(uniq, 3)
    rest, p1 = np.divmod(rest, n)
    tour, p0 = np.divmod(rest, n)
    return {"tour": tour, "p0": p0, "p1": p1, "half": half, "count": counts}


def _tallies(r: dict[str, np.ndarray], sel: np.ndarray | None, names: list[str]) -> dict:
    """First-mover ``(wins, losses, draws)`` per ordered pair, from reduced rows."""
    n = len(names)
    if sel is not None:
        r = {k: v[sel] for k, v in r.items()}
    pair = r["p0"] * n + r["p1"]
    uniq, inv = np.unique(pair, return_inverse=True)
    out = [
        np.bincount(inv, weights=r["count"] * (r["half"] == h), minlength=len(uniq))
        for h in (2, 0, 1)
    ]
    counts = [x.astype(np.int64) for x in out]
    w, l_, d = (x.tolist() for x in counts)
    tallies = _Tallies(
        ((names[c // n], names[c % n]), (w[i], l_[i], d[i])) for i, c in enumerate(uniq.tolist())
    )
    involved = np.unique(np.concatenate([uniq // n, uniq % n])).tolist()
    tallies.players = sorted(names[k] for k in involved)
    h = hashlib.blake2b(digest_size=16)
    h.update(json.dumps([names[k] for k in involved]).encode())
    h.update(np.searchsorted(involved, uniq // n).tobytes())
    h.update(np.searchsorted(involved, uniq % n).tobytes())
    for x in counts:
        h.update(x.tobytes())
    tallies.digest = h.digest()
    return tallies


class _Tallies(dict):
    """Tallies that know their players and a digest of their content (the fit
    cache's key), both computed from the arrays rather than the dict."""

    players: list[str]
    digest: bytes


def _order(tallies: dict) -> list[str]:
    if isinstance(tallies, _Tallies):
        return tallies.players
    seen: dict[str, None] = {}
    for a, b in tallies:
        seen.setdefault(a)
        seen.setdefault(b)
    return sorted(seen)


def _table(
    game: str,
    variant: str,
    t: dict[str, np.ndarray],
    names: list[str],
    tour_names: list[str],
    anchor: tuple[str, float] | None,
    fits: _FitCache,
) -> RatingTable:
    n = len(names)
    games = len(t["p0"])
    last_when = np.zeros(max(len(tour_names), 1))
    np.maximum.at(last_when, t["tour"], t["when"])
    first_when = np.full(max(len(tour_names), 1), np.inf)
    np.minimum.at(first_when, t["tour"], t["when"])
    r = _reduce(t, n)
    tallies = _tallies(r, None, names)
    players = _order(tallies)
    use_anchor = anchor if anchor is not None and anchor[0] in players else None
    fit = fits.fit(tallies, players, use_anchor) if len(players) >= 2 else None

    wins = np.zeros(n, np.int64)
    losses = np.zeros(n, np.int64)
    draws = np.zeros(n, np.int64)
    for side, me in ((0, r["p0"]), (1, r["p1"])):
        mine = r["half"] if side == 0 else 2 - r["half"]
        for h, acc in ((2, wins), (0, losses), (1, draws)):
            acc += np.bincount(me, weights=r["count"] * (mine == h), minlength=n).astype(np.int64)
    tours: dict[int, set[int]] = {}
    last = np.zeros(n)
    both = np.unique(
        np.concatenate([r["p0"], r["p1"]]) * len(last_when) + np.concatenate([r["tour"], r["tour"]])
    )
    player_of, tour_of = np.divmod(both, len(last_when))
    np.maximum.at(last, player_of, last_when[tour_of])
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
                last_played=_date(float(last[k])),
            )
        )

    # Crosstable: the row player's points and games against the column player.
    cross: dict[tuple[str, str], tuple[float, int]] = {}
    for (a, b), (w, l_, d) in tallies.items():
        for key, mine in (((a, b), w + d / 2), ((b, a), l_ + d / 2)):
            old = cross.get(key, (0.0, 0))
            cross[key] = (old[0] + mine, old[1] + w + l_ + d)

    points, history = _history(r, names, tour_names, first_when, last_when, anchor, fits, order)
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
        crosstable=cross,
    )


def _history(
    r: dict[str, np.ndarray],
    names: list[str],
    tour_names: list[str],
    first_when: np.ndarray,
    last_when: np.ndarray,
    anchor: tuple[str, float] | None,
    fits: _FitCache,
    order: list[str],
) -> tuple[list[tuple[str, str]], dict[str, list[tuple[float, float] | None]]]:
    """Every player's rating after each tournament (in the order they started),
    each point a joint fit of every game up to it."""
    ordered = sorted(set(r["tour"].tolist()), key=lambda x: (first_when[x], x))
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
        tallies = _tallies(r, tour_rank <= m, names)
        players = _order(tallies)
        use_anchor = anchor if anchor is not None and anchor[0] in players else None
        fit = fits.fit(tallies, players, use_anchor) if len(players) >= 2 else None
        x = ordered[m]
        points.append((tour_names[x], _date(float(last_when[x]))))
        got = {}
        if fit is not None:
            got = {p: (fit["ratings"][i], fit["errors"][i]) for i, p in enumerate(players)}
        for p in order:
            history[p].append(got.get(p))
    return points, history


def _finite(x: float | None) -> float | None:
    return x if x is not None and math.isfinite(x) else None
