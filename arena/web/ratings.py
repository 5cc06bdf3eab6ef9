"""The web view's rating list: a page over every tournament the server shows, and a
page per player listing its games across tournaments, paged as the games table is.

The list is :func:`arena.ratinglist.fit.build_list` over the served folders,
rebuilt (in a thread, incrementally through its cache) only when a store's game
count changed, so a page opened while a tournament runs shows its latest games.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import trio

from arena.ratinglist.collect import RatingInputError
from arena.ratinglist.fit import RatingList, build_list
from arena.ratinglist.render import history_svg, page_context
from arena.storage.store import StoreError
from arena.web.store_view import MAX_PAGE, GameFilter
from arena.web.summaries import Summaries

__all__ = ["PLAYER_LINK", "RatingsCache", "player_context", "player_games"]

PLAYER_LINK = "/ratings/player/{player}"


class RatingsCache:
    """The latest list, keyed by every served store's game count."""

    def __init__(self) -> None:
        self._key: tuple[int, ...] | None = None
        self._data: RatingList | None = None
        self._error = ""
        self._lock = trio.Lock()

    async def get(
        self, tournaments: Mapping[str, Path], summaries: Summaries
    ) -> tuple[RatingList | None, str]:
        async with self._lock:
            counts = []
            for directory in tournaments.values():
                try:
                    view = await summaries.opened(directory)
                    counts.append(await summaries.read(directory, view.count))
                except StoreError:
                    counts.append(-1)
            key = tuple(counts)
            if key != self._key:
                paths = list(tournaments.values())
                try:
                    self._data = await trio.to_thread.run_sync(
                        lambda: build_list(paths, skip_bad=True)
                    )
                    self._error = ""
                except RatingInputError as exc:
                    self._data, self._error = None, str(exc)
                self._key = key
            return self._data, self._error


def ratings_context(data: RatingList | None, error: str, root: str = "") -> dict[str, Any]:
    """The rating list page's context; its player links under ``root`` (``build_app``)."""
    if data is None:
        return {"data": None, "error": error}
    context = page_context(data, link=root + PLAYER_LINK)
    del context["fmt"]  # the web view's pages get it already
    return {**context, "error": ""}


def player_context(data: RatingList, player: str) -> dict[str, Any] | None:
    """The player's row, history and head-to-head in every list it is in."""
    lists = []
    for t in data.tables:
        try:
            row = t.row(player)
        except KeyError:
            continue
        opponents = sorted(
            ((b, pg) for (a, b), pg in t.crosstable.items() if a == player),
            key=lambda item: -item[1][1],
        )
        lists.append(
            {"table": t, "row": row, "history": history_svg(t, [player]), "opponents": opponents}
        )
    return {"lists": lists} if lists else None


def _tournament_names(tournaments: Mapping[str, Path]) -> dict[str, str]:
    return {str(path): name for name, path in tournaments.items()}


def player_games(
    tournaments: Mapping[str, Path],
    summaries: Summaries,
    data: RatingList,
    player: str,
    offset: int,
    limit: int,
) -> dict[str, object]:
    """One page of the player's games, newest tournaments first, across every
    tournament and entry it played as (each tournament's games are its store's)."""
    names = _tournament_names(tournaments)
    entries = {}
    for t in data.tables:
        for e in t.where.get(player, []):
            entries[(e.directory, e.entry)] = e
    ordered = sorted(entries.values(), key=lambda e: (e.tournament, e.entry))
    limit = max(0, min(limit, MAX_PAGE))
    total, skip = 0, offset
    out: list[dict[str, object]] = []
    for e in ordered:
        view = summaries.view(Path(e.directory))
        where = GameFilter(player=e.entry)
        n, _ = view.games(where, limit=0)
        total += n
        if skip >= n:
            skip -= n
            continue
        want = limit - len(out)
        if want <= 0:
            continue
        _, rows = view.games(where, offset=skip, limit=want)
        skip = 0
        name = names.get(e.directory, e.tournament)
        for r in rows:
            r["tournament"] = name
            r["entry"] = e.entry
            out.append(r)
    return {"total": total, "offset": offset, "games": out}
