"""Each served tournament's report tables, kept between pages: a store is read
in threads of its own, and its tables rebuilt only when its game count (or its
analysis) changed. The pages (``app.py``) and the rating list (``ratings.py``)
share one :class:`Summaries`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import trio

from arena.analysis.store import ANALYSIS_NAME, AnalysisStore
from arena.report.summary import ReportData, build_report
from arena.web.store_view import StoreView, SummaryView

__all__ = ["STORE_THREADS", "Summaries"]

T = TypeVar("T")

STORE_THREADS = 4
"""Threads that may read one store at once. Each store has a limiter of its own,
so a store from elsewhere that makes its readers wait (until their queries'
deadline) holds at most these, never trio's shared thread limiter: other
stores' pages, and pages that read no store, still answer."""


class Summaries:
    """``ReportData`` per tournament, rebuilt only when its game count changed and
    in a thread (the fit is numpy work), shared by every page that asks."""

    def __init__(self) -> None:
        self._views: dict[Path, StoreView] = {}
        self._cache: dict[tuple[Path, bool], tuple[tuple[int, ...], ReportData]] = {}
        self._locks: dict[Path, trio.Lock] = {}
        self._limiters: dict[Path, trio.CapacityLimiter] = {}
        self._opening: dict[Path, threading.Lock] = {}
        self._opening_lock = threading.Lock()

    def view(self, directory: Path) -> StoreView:
        """The store's view, opened on first use (in a thread: :meth:`opened`); one
        store's slow opening holds no other store's."""
        with self._opening_lock:
            opening = self._opening.setdefault(directory, threading.Lock())
        with opening:
            view = self._views.get(directory)
            if view is None:
                view = self._views[directory] = StoreView(directory)
            return view

    async def opened(self, directory: Path) -> StoreView:
        """:meth:`view`, opened in one of the store's own threads if it is not yet."""
        view = self._views.get(directory)
        return view if view is not None else await self.read(directory, self.view, directory)

    async def read(
        self, directory: Path, fn: Callable[..., T], *args: object, abandon: bool = False
    ) -> T:
        """``fn(*args)`` in a thread of ``directory``'s own limiter (``STORE_THREADS``);
        with ``abandon``, a cancelled wait leaves the thread to finish on its own."""
        limiter = self._limiters.setdefault(directory, trio.CapacityLimiter(STORE_THREADS))
        return await trio.to_thread.run_sync(fn, *args, limiter=limiter, abandon_on_cancel=abandon)

    async def get(self, directory: Path, *, full: bool = False) -> ReportData:
        """The report's tables for ``directory``, recomputed only when games were added.

        The live page (refreshed every second) reads the columns alone; a
        tournament page (``full``) decodes every record once per new game count
        (or new analysis), for the tables that need the moves: search statistics,
        by-role figures and the solver's analysis.
        """
        view = await self.opened(directory)
        lock = self._locks.setdefault(directory, trio.Lock())
        async with lock:
            count = await self.read(directory, view.count)
            stamp = (count, *(_analysis_stamp(directory) if full else ()))
            cached = self._cache.get((directory, full))
            if cached is None or cached[0] != stamp:
                source = view if full else SummaryView(view)
                data = await self.read(
                    directory,
                    lambda: _report(source, directory, full),
                )
                cached = self._cache[(directory, full)] = (stamp, data)
            return cached[1]

    def close(self) -> None:
        for view in self._views.values():
            view.close()


def _analysis_stamp(directory: Path) -> tuple[int, ...]:
    """What changes when analysis.sqlite does (size and time of it and its WAL)."""
    out: list[int] = []
    for name in (ANALYSIS_NAME, ANALYSIS_NAME + "-wal"):
        try:
            st = (directory / name).stat()
        except OSError:
            out += [0, 0]
            continue
        out += [st.st_size, st.st_mtime_ns]
    return tuple(out)


def _report(source: StoreView | SummaryView, directory: Path, full: bool) -> ReportData:
    analysis = AnalysisStore.open_readonly(directory) if full else None
    try:
        return build_report(source, directory=directory, analysis=analysis)
    finally:
        if analysis is not None:
            analysis.close()
