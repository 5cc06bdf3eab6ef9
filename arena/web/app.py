"""The web view as an ASGI app (Starlette, which runs on trio through anyio).

Pages are rendered from the same ``ReportData`` as the reports (so a page and a
report of the same store agree) and the same board drawing; finished games are
always read from the store through a read-only connection, running games from
the :class:`~arena.web.hub.LiveHub`. The live page is one server-sent-event
stream: a snapshot first, then only what changed, pushed as it changes. Pages
load their scripts and styles from ``/static/`` (no inline code: the content
security policy allows none); who may ask and what they may ask is
``arena/web/guard.py``'s.

Behind a reverse proxy that serves the arena under a path (``--public-url
https://host/cup/``, the proxy stripping ``/cup``) every address a page names
(links, scripts, the scripts' fetches and event stream) and every redirect starts
with that path, the ``root``; the routes stay at ``/``. Without one the root is
``""`` and the pages are as they always were.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import time
import urllib.parse
from collections.abc import AsyncIterator, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import jinja2
import trio
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from arena.analysis.figures import game_calls
from arena.analysis.store import AnalysisStore
from arena.analysis.summary import marks_of
from arena.games import GameError, game_names, get_game
from arena.match.record import GameRecord
from arena.report import fmt
from arena.report.html import asset, embed_json, picture_assets, section_context
from arena.report.replay import replay_json
from arena.report.summary import ReportData, bot_output
from arena.storage.store import DB_NAME, StoreError
from arena.web.guard import (
    LOOPBACK_NAMES,
    BadRequest,
    GamesQuery,
    PageQuery,
    ReplayQuery,
    guarded,
    parse_query,
)
from arena.web.hub import PROGRESS, RESULTS, LiveHub, Subscriber, TooManyPages
from arena.web.ratings import RatingsCache, player_context, player_games, ratings_context
from arena.web.rounds import rounds_payload
from arena.web.store_view import GameFilter
from arena.web.summaries import Summaries

__all__ = ["Site", "build_app", "find_tournaments", "refresh_results"]

BATCH_SECONDS = 0.02
"""After each send a page's stream waits this long, so moves arriving meanwhile
go out together (at most ~50 messages a second per page, however fast bots move)."""
RESULTS_INTERVAL = 1.0
"""Standings and results are re-read from the store at most once a second."""
HEARTBEAT_SECONDS = 15.0
INDEX_WAIT = 2.0
"""Seconds the list of tournaments waits for one store's game count before
showing it without one."""
RECENT = 12


def find_tournaments(paths: list[Path]) -> dict[str, Path]:
    """Tournament folders by name: each path is a tournament folder (it holds the
    database) or a folder of them, such as ``results/``."""
    found: dict[str, Path] = {}
    for path in paths:
        candidates = (
            [path]
            if (path / DB_NAME).is_file()
            else sorted(p for p in path.iterdir() if (p / DB_NAME).is_file())
            if path.is_dir()
            else []
        )
        for directory in candidates:
            name, n = directory.name, 2
            while name in found and found[name] != directory.resolve():
                name, n = f"{directory.name}-{n}", n + 1
            found[name] = directory.resolve()
    return found


def replay_analysis(directory: Path, key: str, record: GameRecord) -> dict[str, Any] | None:
    """The replay's ``an`` field: the solver's values and marks, if analysed."""
    analysis = AnalysisStore.open_readonly(directory)
    if analysis is None:
        return None
    try:
        values = analysis.values(key)
    finally:
        analysis.close()
    if values is None or len(values.values) != len(record.actions) + 1:
        return None
    try:
        solves = get_game(record.game).solves or "game"
    except GameError:
        return None
    return marks_of(game_calls(record, values.values), values).replay_json(solves)


@dataclasses.dataclass
class Site:
    """What one server shows: stored tournaments, and the live one if a run is on."""

    tournaments: dict[str, Path]
    hub: LiveHub | None = None
    live_name: str | None = None
    summaries: Summaries = dataclasses.field(default_factory=Summaries)
    ratings: RatingsCache = dataclasses.field(default_factory=RatingsCache)


def _environment() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.ChoiceLoader(  # the report's section macros come from its folder
            [
                jinja2.PackageLoader("arena.web", "templates"),
                jinja2.PackageLoader("arena.report", "templates"),
                jinja2.PackageLoader("arena.ratinglist", "templates"),
            ]
        ),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
    )


def _static(name: str) -> str:
    return resources.files("arena.web").joinpath("static", name).read_text(encoding="utf-8")


def _standings(data: ReportData) -> list[dict[str, Any]]:
    return [
        {
            **dataclasses.asdict(s),
            "cells": fmt.standing_cells(s, blank_zero_faults=True),
        }
        for s in data.standings
    ]


def _sse(event: str, data: bytes) -> bytes:
    return b"event: " + event.encode() + b"\ndata: " + data + b"\n\n"


class StaticFiles:
    """The pages' scripts and style sheet, served from memory at ``/static/NAME``.

    Each page names them with their content's digest (``?v=``), so a browser
    may keep them as long as it likes: a new arena's files have new addresses.
    """

    MEDIA = {".js": "text/javascript", ".css": "text/css"}

    def __init__(self, pictures: dict[str, str], root: str = "") -> None:
        """``pictures``: the games' page assets (``arena.report.html.picture_assets``);
        ``root``: the path the view is served under (``build_app``)."""
        self.root = root
        names = ("live.js", "games.js", "tournament.js", "player.js")
        files = {name: _static(name) for name in names}
        files["replay.js"] = asset("replay.js")  # the report's replay viewer
        files["pictures.js"] = pictures["picture_script"]  # each game's own drawing
        files["style.css"] = asset("report.css") + pictures["picture_css"] + _static("site.css")
        self.files = {name: text.encode() for name, text in files.items()}
        self.digests = {
            name: hashlib.sha256(data).hexdigest()[:16] for name, data in self.files.items()
        }

    def url(self, name: str) -> str:
        return f"{self.root}/static/{name}?v={self.digests[name]}"

    async def serve(self, request: Request) -> Response:
        name = request.path_params["file"]
        data = self.files.get(name)
        if data is None:
            raise _NotFound(f"no file {name!r}")
        current = request.query_params.get("v") == self.digests[name]
        cache = "public, max-age=31536000, immutable" if current else "no-cache"
        media = self.MEDIA[name[name.rindex(".") :]]
        return Response(data, media_type=media, headers={"Cache-Control": cache})


def build_app(
    site: Site,
    *,
    token: str | None = None,
    hosts: Sequence[str] = LOOPBACK_NAMES,
    root: str = "",
) -> ASGIApp:
    """The view of ``site``: behind ``token`` if given, else answering only requests
    whose ``Host`` is one of ``hosts`` (``arena/web/guard.py``); its pages name
    every address under ``root`` (``/cup``: the path a proxy serves it under, and
    strips; ``""``: the host's root)."""
    env = _environment()
    # Every installed game's pictures: a served folder may hold tournaments of any game.
    pictures = picture_assets(game_names())
    static = StaticFiles(pictures, root)

    def page(template: str, **context: Any) -> HTMLResponse:
        html = env.get_template(template).render(
            static=static.url,
            root=root,
            site=site,
            fmt=fmt,
            page_name=embed_json(context.get("name", "")),
            pictures=pictures["pictures"],
            **context,
        )
        return HTMLResponse(html, headers={"Cache-Control": "no-store"})

    def directory_of(request: Request) -> Path:
        name = request.path_params["name"]
        if name not in site.tournaments:
            raise _NotFound(f"no tournament named {name!r}")
        return site.tournaments[name]

    async def index(request: Request) -> Response:
        rows = []
        for name, directory in site.tournaments.items():
            count = None  # unreadable, or not answering: the list still shows
            with trio.move_on_after(INDEX_WAIT), contextlib.suppress(StoreError):
                count = await site.summaries.read(
                    directory, lambda d=directory: site.summaries.view(d).count(), abandon=True
                )
            rows.append({"name": name, "directory": str(directory), "games": count})
        return page("index.html.j2", rows=rows)

    async def live(request: Request) -> Response:
        if site.hub is None:
            raise _NotFound("no tournament is running in this server")
        return page("live.html.j2", name=site.hub.name or site.live_name or "")

    async def live_stream(request: Request) -> Response:
        hub = site.hub
        if hub is None or site.live_name is None:
            raise _NotFound("no tournament is running in this server")
        directory = site.tournaments[site.live_name]
        try:
            sub = hub.subscribe()
        except TooManyPages as exc:
            return Response(str(exc), status_code=503, media_type="text/plain")
        return StreamingResponse(
            _live_events(hub, sub, lambda: results_payload(site, directory)),
            media_type="text/event-stream",
            headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"},
        )

    async def tournament(request: Request) -> Response:
        directory = directory_of(request)
        data = await site.summaries.get(directory, full=True)
        reasons = list(data.reasons)
        live_here = site.hub is not None and site.live_name == request.path_params["name"]
        return page(
            "tournament.html.j2",
            name=request.path_params["name"],
            data=data,
            reasons=reasons,
            **section_context(data),
            live_here=live_here,
        )

    async def games(request: Request) -> Response:
        directory = directory_of(request)
        q = parse_query(request, GamesQuery)
        where = GameFilter(
            player=q.player,
            reason=q.reason,
            result=q.result,
            faulted=q.faulted,
            blunder=q.blunder,
        )
        offset, limit = q.offset, q.limit
        view = await site.summaries.opened(directory)
        total, rows = await site.summaries.read(
            directory, lambda: view.games(where, offset=offset, limit=limit)
        )
        return JSONResponse({"total": total, "offset": offset, "games": rows})

    async def replay(request: Request) -> Response:
        directory = directory_of(request)
        key = parse_query(request, ReplayQuery).key
        view = await site.summaries.opened(directory)
        record = await site.summaries.read(directory, view.record, key)
        if record is None:
            raise _NotFound(f"no game {key!r} in {request.path_params['name']}")
        out = await trio.to_thread.run_sync(replay_json, record)
        try:
            an = await site.summaries.read(directory, replay_analysis, directory, key, record)
        except StoreError:
            an = None  # an unreadable analysis: the replay without it
        if an is not None:
            out["an"] = an
        out.update(
            key=key,
            opening=record.opening,
            detail=record.detail,
            result=record.result,
            reason=record.reason,
            output=bot_output(record),
        )
        return JSONResponse(out)

    async def ratings(request: Request) -> Response:
        data, error = await site.ratings.get(site.tournaments, site.summaries)
        return page("ratings.html.j2", **ratings_context(data, error, root))

    async def player(request: Request) -> Response:
        name = request.path_params["player"]
        data, _ = await site.ratings.get(site.tournaments, site.summaries)
        context = player_context(data, name) if data is not None else None
        if context is None:
            raise _NotFound(f"no player named {name!r} in the rating list")
        return page("player.html.j2", name=name, player=name, **context)

    async def player_games_json(request: Request) -> Response:
        name = request.path_params["player"]
        data, _ = await site.ratings.get(site.tournaments, site.summaries)
        if data is None:
            raise _NotFound("no rating list")
        q = parse_query(request, PageQuery)
        offset, limit = q.offset, q.limit
        out = await trio.to_thread.run_sync(
            lambda: player_games(site.tournaments, site.summaries, data, name, offset, limit)
        )
        return JSONResponse(out)

    async def not_found(request: Request, exc: Exception) -> Response:
        return Response(str(exc), status_code=404, media_type="text/plain")

    async def no_page(request: Request, exc: Exception) -> Response:
        """No route: Starlette's answer, and, for a path still under ``root``, why
        (the proxy in front did not strip it; see the README's proxy setups)."""
        text = getattr(exc, "detail", "Not Found")
        path = request.scope.get("raw_path", b"").decode("latin-1")
        if root and (path == root or path.startswith(root + "/")):
            text = (
                f"no page {path}: the proxy in front must strip {root} before it passes a "
                f"request on (nginx: location {root}/ with proxy_pass http://HOST:PORT/; "
                f"ending in a slash; Caddy: handle_path {root}/*)"
            )
        return Response(text, status_code=404, media_type="text/plain")

    async def bad_request(request: Request, exc: Exception) -> Response:
        return JSONResponse({"error": str(exc)}, status_code=400)

    async def store_error(request: Request, exc: Exception) -> Response:
        """A store that cannot be read (refused, or a query past its deadline): one line."""
        return Response(str(exc), status_code=500, media_type="text/plain")

    app = Starlette(
        routes=[
            Route("/", index),
            Route("/live", live),
            Route("/live/events", live_stream),
            Route("/t/{name}", tournament),
            Route("/t/{name}/games", games),
            Route("/t/{name}/replay", replay),
            Route("/ratings", ratings),
            Route("/ratings/games/{player:path}", player_games_json),
            Route("/ratings/player/{player:path}", player),
            Route("/static/{file}", static.serve),
        ],
        exception_handlers={
            404: no_page,
            _NotFound: not_found,
            BadRequest: bad_request,
            StoreError: store_error,
        },
    )
    return guarded(_redirect_under(app, root), token=token, hosts=hosts, root=root)


class _NotFound(Exception):
    pass


def _redirect_under(app: ASGIApp, root: str) -> ASGIApp:
    """``app`` whose redirects (Starlette's, from ``/live/`` to ``/live``) name the
    path only, under ``root``: Starlette writes the address the request came to
    (``http://127.0.0.1:8080/live``), which behind a proxy is the proxy's view of
    the arena (the wrong scheme, maybe the wrong host, no prefix), where the
    browser's own scheme and host, and the root, are right."""

    async def middleware(scope: Scope, receive: Receive, send: Send) -> None:
        async def send_under(message: Message) -> None:
            if message["type"] == "http.response.start" and 300 <= message["status"] < 400:
                headers = [
                    (name, _under(root, value) if name == b"location" else value)
                    for name, value in message["headers"]
                ]
                message = {**message, "headers": headers}
            await send(message)

        await app(scope, receive, send_under if scope["type"] == "http" else send)

    return middleware


def _under(root: str, location: bytes) -> bytes:
    parts = urllib.parse.urlsplit(location.decode("latin-1"))
    return (root + urllib.parse.urlunsplit(("", "", parts.path, parts.query, ""))).encode("latin-1")


async def _live_events(hub: LiveHub, sub: Subscriber, results: Any) -> AsyncIterator[bytes]:
    """One page's event stream: a snapshot, then what changed, as it changes.

    Waits on the subscriber's wake-up (never polls) and never waits for the store:
    the results it sends were read by :func:`refresh_results` beforehand.
    """
    try:

        async def snapshot() -> bytes:
            body = hub.encode(hub.snapshot())
            fresh = hub.results if hub.results is not None else hub.encode(await results())
            return _sse("snapshot", body[:-1] + b',"results":' + fresh + b"}")

        yield await snapshot()
        while True:
            with trio.move_on_after(HEARTBEAT_SECONDS):
                await sub.wake.wait()
            resync, topics = sub.take()
            if resync:
                yield await snapshot()
                continue
            parts: list[bytes] = []
            for topic in topics:
                if topic == PROGRESS:
                    parts.append(_sse("progress", hub.encode(hub.progress_payload())))
                elif topic == RESULTS:
                    if hub.results is not None:
                        parts.append(_sse("results", hub.results))
                else:
                    key = topic.split(":", 1)[1]
                    payload = hub.game_bytes(key)
                    parts.append(
                        _sse("game", payload)
                        if payload is not None
                        else _sse("gone", hub.encode({"key": key, "t": time.time()}))
                    )
            if hub.closed and not sub.pending:
                yield b"".join(parts) + _sse("end", b"{}")
                return
            if parts:
                yield b"".join(parts)
                await trio.sleep(BATCH_SECONDS)
            elif not topics:
                yield b": keep-alive\n\n"
    finally:
        hub.unsubscribe(sub)


async def refresh_results(site: Site, *, once: bool = False) -> None:
    """Re-read the live tournament's standings and results from the store after
    games are stored, at most once per ``RESULTS_INTERVAL``, and hand them to the
    hub, so that no page's stream ever waits on the store or the rating fit."""
    hub = site.hub
    if hub is None or site.live_name is None:
        return
    directory = site.tournaments[site.live_name]
    while True:
        if not once:
            await hub.results_stale.wait()
        hub.results_stale = trio.Event()
        hub.set_results(hub.encode(await results_payload(site, directory)))
        if once:
            return
        await trio.sleep(RESULTS_INTERVAL)


async def results_payload(site: Site, directory: Path) -> dict[str, Any]:
    data = await site.summaries.get(directory)
    view = await site.summaries.opened(directory)
    _, recent = await site.summaries.read(
        directory, lambda: view.games(GameFilter(), limit=RECENT, newest_first=True)
    )
    _, faults = await site.summaries.read(
        directory, lambda: view.games(GameFilter(faulted=True), limit=RECENT, newest_first=True)
    )
    return {
        "games": data.games,
        "standings": _standings(data),
        "first_move": fmt.elo(data.first_move, signed=True),
        "recent": recent,
        "faults": faults,
        "rounds": rounds_payload(data.rounds),
    }


def static_path() -> Path:
    return Path(str(resources.files("arena.web").joinpath("static")))
