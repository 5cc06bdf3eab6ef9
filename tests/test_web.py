"""The web view without a browser: the live event stream of a real tournament,
the server's read-only store pages, the token gate and the hub's bounds."""

from __future__ import annotations

import json
import re
import sqlite3
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
import trio
from click.testing import CliRunner

from arena.cli import main
from arena.match.events import GameMoved, GameStarted
from arena.plan.config import parse_config
from arena.report.summary import build_report
from arena.storage.store import Store
from arena.tournament import Observers, Tournament
from arena.web.app import Site, find_tournaments
from arena.web.hub import MAX_PENDING, PROGRESS, LiveHub, game_topic
from arena.web.server import Listen, parse_listen, serve, url_for
from arena.web.store_view import GameFilter, StoreView

SLOW_RANDOM = """
import random, sys, time
from arena.sdk import run
rng = random.Random(int(sys.argv[1]))
def choose(request):
    time.sleep(0.003)
    return rng.choice(request.legal)
run(choose, name="slow")
"""


def tournament_text(tmp_path: Path, name: str, games: int = 2, concurrency: int = 2) -> str:
    bot = tmp_path / "slow_bot.py"
    bot.write_text(SLOW_RANDOM)
    return f"""
name = "{name}"
variant = "single"
tc = "5+0.1"
games_per_pairing = {games}
concurrency = {concurrency}
seed = 3
[openings]
plies = 2
[[bots]]
name = "a"
command = ["{sys.executable}", "{bot}", "1"]
[[bots]]
name = "b"
command = ["{sys.executable}", "{bot}", "2"]
[[bots]]
name = "c"
command = ["{sys.executable}", "{bot}", "3"]
"""


def make_tournament(tmp_path: Path, name: str, hub: LiveHub, workers: int, games: int = 2):
    text = tournament_text(tmp_path, name, games)
    config_path = tmp_path / f"{name}.toml"
    config_path.write_text(text)
    config = parse_config(text, str(config_path))
    return Tournament(
        config,
        text,
        results_root=tmp_path / "results",
        observer=Observers(hub),
        config_path=config_path,
        workers=workers,
    )


async def sse_events(response: httpx.Response):
    """``(event, data)`` pairs of a server-sent-event stream."""
    event, data = "message", []
    async for line in response.aiter_lines():
        if line == "":
            if data:
                yield event, json.loads("\n".join(data))
            event, data = "message", []
        elif line.startswith("event: "):
            event = line[7:]
        elif line.startswith("data: "):
            data.append(line[6:])


@pytest.mark.parametrize("workers", [1, 2])
async def test_live_stream_follows_a_real_tournament(tmp_path: Path, workers: int) -> None:
    """Moves arrive ply by ply from this process (1) or worker processes (2); a
    game's board goes away when it is stored; standings follow from the store."""
    hub = LiveHub()
    tournament = make_tournament(tmp_path, "live", hub, workers)
    name = tournament.directory.name
    site = Site({name: tournament.directory.resolve()}, hub=hub, live_name=name)
    plies: dict[str, list[int]] = {}
    gone: set[str] = set()
    results: list[dict[str, Any]] = []
    with trio.fail_after(90):
        async with trio.open_nursery() as nursery:
            url = await nursery.start(serve, site, parse_listen("127.0.0.1:0"))
            async with (
                httpx.AsyncClient(timeout=30) as client,
                client.stream("GET", url + "/live/events") as response,
            ):
                assert response.headers["content-type"].startswith("text/event-stream")
                events = sse_events(response)
                kind, snapshot = await events.__anext__()
                assert kind == "snapshot" and snapshot["games"] == []
                nursery.start_soon(tournament.run)
                async for kind, data in events:
                    if kind == "game":
                        plies.setdefault(data["key"], []).append(data["ply"])
                        assert data["players"][0] in "abc" and data["k"] == "kamisado"
                        assert len(data["clocks" if data["ply"] else "tc"]) == 2
                    elif kind == "gone":
                        gone.add(data["key"])
                    elif kind == "results":
                        results.append(data)
                        if data["games"] == 6:
                            break
            nursery.cancel_scope.cancel()
    tournament.close()
    # Every game left the page when stored; under load a short game may end before
    # the page's next send, and then its board is never shown, only its end.
    assert len(gone) == 6 and set(plies) <= gone and len(plies) >= 3
    for seen in plies.values():
        assert seen == sorted(seen), seen  # boards only move forward (moves may coalesce)
    assert any(len(set(seen)) >= 3 for seen in plies.values()), plies
    final = results[-1]
    assert final["games"] == 6 and sum(s["games"] for s in final["standings"]) == 12
    assert [g["key"] for g in final["recent"]][0] in gone


async def test_a_page_opened_mid_run_shows_what_a_page_open_from_the_start_shows(
    tmp_path: Path,
) -> None:
    """Both bots stall at their third decision, so the running games settle: a page
    opened then (its snapshot, then events) must agree with one that watched every
    event from the start, and with the hub itself."""
    bad_bot = Path(__file__).with_name("bad_bot.py")
    text = f"""
name = "mid"
variant = "single"
tc = "60+0"
games_per_pairing = 4
concurrency = 2
seed = 5
[[bots]]
name = "a"
command = ["{sys.executable}", "{bad_bot}", "sleep", "60", "--at", "3"]
[[bots]]
name = "b"
command = ["{sys.executable}", "{bad_bot}", "sleep", "60", "--at", "3"]
"""
    (tmp_path / "mid.toml").write_text(text)
    hub = LiveHub()
    tournament = Tournament(
        parse_config(text, str(tmp_path / "mid.toml")),
        text,
        results_root=tmp_path / "r",
        observer=Observers(hub),
        config_path=tmp_path / "mid.toml",
        workers=1,
    )
    site = Site({"mid": tournament.directory.resolve()}, hub=hub, live_name="mid")
    pages: list[dict[str, int]] = [{}, {}]

    async def watch(client: httpx.AsyncClient, url: str, seen: dict[str, int]) -> None:
        async with client.stream("GET", url + "/live/events") as response:
            async for kind, data in sse_events(response):
                if kind == "snapshot":
                    seen.clear()
                    seen.update({g["key"]: g["ply"] for g in data["games"]})
                elif kind == "game":
                    seen[data["key"]] = data["ply"]
                elif kind == "gone":
                    seen.pop(data["key"], None)

    def hub_state() -> dict[str, int]:
        return {k: g.last.ply if g.last else 0 for k, g in hub.games.items()}

    with trio.fail_after(60):
        async with trio.open_nursery() as nursery, httpx.AsyncClient(timeout=60) as client:
            url = await nursery.start(serve, site, parse_listen("127.0.0.1:0"))
            nursery.start_soon(watch, client, url, pages[0])
            while not hub.subscribers:
                await trio.sleep(0.01)
            nursery.start_soon(tournament.run)
            while not (len(hub.games) == 2 and min(hub_state().values()) >= 2):
                await trio.sleep(0.01)
            nursery.start_soon(watch, client, url, pages[1])
            while not (pages[0] == pages[1] == hub_state() and len(pages[1]) == 2):
                await trio.sleep(0.01)
            nursery.cancel_scope.cancel()
    tournament.close()
    assert min(pages[1].values()) >= 2


async def test_stored_pages_are_paged_filtered_and_read_only(tmp_path: Path) -> None:
    hub = LiveHub()
    tournament = make_tournament(tmp_path, "stored", hub, workers=1)
    with trio.fail_after(60):
        await tournament.run()
    tournament.close()
    directory = tournament.directory
    db = directory / "games.sqlite"
    before = db.read_bytes()
    with Store.open_existing(directory) as store:
        stored = dict(store.items())
        report = build_report(store)
    assert sum(b.moves for b in report.bot_stats) > 0
    site = Site(find_tournaments([tmp_path / "results"]))
    assert site.tournaments == {"stored": directory.resolve()}
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            url = await nursery.start(serve, site, parse_listen("127.0.0.1:0"))
            async with httpx.AsyncClient(base_url=url, timeout=30) as client:
                index = await client.get("/")
                assert index.status_code == 200 and "/t/stored" in index.text
                page = await client.get("/t/stored")
                assert page.status_code == 200 and 'id="standings-table"' in page.text
                for b in report.bot_stats:  # the report's sections, from every record
                    assert (
                        f'<tr class="bot-stats" data-player="{b.player}" data-moves="{b.moves}"'
                    ) in page.text
                for r in report.role_stats:
                    games = ",".join(map(str, r.games))
                    assert (
                        f'<tr class="role-stats" data-player="{r.player}" data-games="{games}"'
                    ) in page.text
                first = (await client.get("/t/stored/games", params={"limit": 4})).json()
                rest = (await client.get("/t/stored/games", params={"offset": 4})).json()
                keys = [g["key"] for g in first["games"] + rest["games"]]
                assert first["total"] == 6 and keys == list(stored)
                only_a = (await client.get("/t/stored/games", params={"player": "a"})).json()
                expected = [k for k, r in stored.items() if "a" in r.players]
                assert [g["key"] for g in only_a["games"]] == expected
                wins = (await client.get("/t/stored/games", params={"result": "1-0"})).json()
                assert wins["total"] == sum(r.score == 1.0 for r in stored.values())
                key = keys[0]
                replay = (await client.get("/t/stored/replay", params={"key": key})).json()
                assert len(replay["a"]) == len(stored[key].actions)
                assert len(replay["f"]) == len(stored[key].actions) + 1
                missing = await client.get("/t/stored/replay", params={"key": "nope"})
                assert missing.status_code == 404
                assert (await client.get("/t/other")).status_code == 404
                assert (await client.get("/live")).status_code == 404
            nursery.cancel_scope.cancel()
    assert db.read_bytes() == before
    view = StoreView(directory)
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        view._conn.execute("DELETE FROM games")
    assert view.games(GameFilter(reason="no-such"))[0] == 0
    view.close()


async def test_token_gate(tmp_path: Path) -> None:
    listen = parse_listen("0.0.0.0:0")
    assert listen.token and len(listen.token) >= 16  # made up: not a loopback address
    assert parse_listen("127.0.0.1:0").token is None
    assert parse_listen("[::1]:0", "x").token == "x"
    with pytest.raises(ValueError, match="HOST"):
        parse_listen("localhost:http")
    with pytest.raises(ValueError, match="range"):
        parse_listen("70000")
    local = parse_listen("127.0.0.1:0", "s3cret")
    site = Site({})
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            url = await nursery.start(serve, site, local)
            assert url_for(url, local).endswith("/?token=s3cret")
            async with httpx.AsyncClient(base_url=url, timeout=30) as client:
                assert (await client.get("/")).status_code == 401
                assert (await client.get("/?token=wrong")).status_code == 401
                headers = {"Authorization": "Bearer s3cret"}
                assert (await client.get("/", headers=headers)).status_code == 200
                ok = await client.get("/?token=s3cret")
                assert ok.status_code == 200 and "arena_token" in ok.headers["set-cookie"]
                assert (await client.get("/t/x/games")).status_code == 404  # the cookie
            nursery.cancel_scope.cancel()


def test_hub_coalesces_and_bounds_each_page() -> None:
    """A page that does not read gets each game's latest board once, and past the
    bound a fresh snapshot instead of a backlog; moves after a game is stored,
    or out of order, are ignored."""
    hub = LiveHub()
    sub = hub.subscribe()
    start = GameStarted("g/1", "kamisado", "single", ["a", "b"], "", ["1+0", "1+0"], 0.0)
    hub.game_event(start)
    for ply in range(1, 50):
        hub.game_event(GameMoved("g/1", ply, ply % 2, f"m{ply}", 1, False, "", [1, 1], 0.0))
    hub.game_event(GameMoved("g/1", 10, 0, "late", 1, False, "", [1, 1], 0.0))
    assert hub.games["g/1"].last is not None and hub.games["g/1"].last.ply == 49
    resync, topics = sub.take()
    assert not resync and topics == [game_topic("g/1")]
    for n in range(MAX_PENDING + 1):
        hub.game_event(GameStarted(f"x/{n}", "kamisado", "single", ["a", "b"], "", [], 0.0))
    resync, topics = sub.take()
    assert resync and topics == [] and sub.dropped == 1
    hub.finished.add("g/1")
    hub.games.pop("g/1")
    hub.game_event(GameMoved("g/1", 50, 0, "m", 1, False, "", [1, 1], 0.0))
    assert "g/1" not in hub.games
    hub.stopping()
    assert sub.take() == (False, [PROGRESS])
    hub.unsubscribe(sub)
    hub.stopping()
    assert sub.pending == {}


def test_serve_without_results_is_one_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["serve", str(tmp_path)])
    assert result.exit_code != 0
    expected = f"arena: error: no tournament results in {tmp_path}"
    assert result.output.strip().splitlines() == [expected]
    bad = CliRunner().invoke(main, ["serve", str(tmp_path), "--listen", "nohost:x"])
    assert "arena: error: --web/--listen wants [HOST:]PORT" in bad.output


def test_live_boards_of_both_games_are_the_reports_frames() -> None:
    """A running game's board is the report's compact frame of its position, for
    Kamisado (towers) and the Sekigahara battle (armies and impacts) alike."""
    from arena.games import get_game
    from arena.report.replay import game_view

    hub = LiveHub()
    for game in ("kamisado", "sekigahara"):
        state = get_game(game).new_state(None)
        key = f"{game}/1"
        hub.game_event(GameStarted(key, game, "v", ["a", "b"], state.to_text(), [], 0.0))
        action = state.legal_actions()[0]
        state.apply_action(action)
        hub.game_event(GameMoved(key, 1, 0, action, 5, False, state.to_text(), [9, 8], 1.0))
        payload = hub.game_payload(key)
        assert payload is not None
        assert payload["k"] == game and payload["ply"] == 1 and payload["clocks"] == [9, 8]
        assert payload["last"]["rtt"] is None  # a local bot: no latency to show
        assert payload["frame"] == get_game(game).show().frame(game_view(state))


# --------------------------------------------------------------------------- hardening (issue 22)


@pytest.fixture(scope="module")
def stored_site(tmp_path_factory: pytest.TempPathFactory) -> Site:
    """A served folder with one small stored tournament (``stored``)."""
    tmp_path = tmp_path_factory.mktemp("hardening")
    tournament = make_tournament(tmp_path, "stored", LiveHub(), workers=1)
    trio.run(tournament.run)
    tournament.close()
    return Site(find_tournaments([tmp_path / "results"]))


async def test_without_a_token_only_the_bound_address_is_answered(stored_site: Site) -> None:
    """A page of another site rebinding its own name to 127.0.0.1 (DNS rebinding)
    sends that name as ``Host``: refused, whatever the path."""
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            url = await nursery.start(serve, stored_site, parse_listen("127.0.0.1:0"))
            port = url.rsplit(":", 1)[1]
            async with httpx.AsyncClient(base_url=url, timeout=30) as client:
                for host in ("127.0.0.1", f"127.0.0.1:{port}", "localhost", f"localhost:{port}"):
                    answer = await client.get("/t/stored/games", headers={"Host": host})
                    assert answer.status_code == 200, host
                for host in (f"evil.example:{port}", "evil.example", f"127.0.0.1.evil:{port}"):
                    for path in ("/", "/t/stored/games", "/static/live.js", "/live/events"):
                        answer = await client.get(path, headers={"Host": host})
                        assert answer.status_code == 400, (host, path)
                        assert "security-policy" in " ".join(answer.headers).lower()
            nursery.cancel_scope.cancel()


async def test_an_ipv6_loopback_view_answers_its_bracketed_address(stored_site: Site) -> None:
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            url = await nursery.start(serve, stored_site, parse_listen("[::1]:0"))
            port = url.rsplit(":", 1)[1]
            async with httpx.AsyncClient(base_url=url, timeout=30) as client:
                assert (await client.get("/")).status_code == 200  # Host: [::1]:PORT
                assert (await client.get("/", headers={"Host": "localhost"})).status_code == 200
                evil = await client.get("/", headers={"Host": f"evil.example:{port}"})
                assert evil.status_code == 400
            nursery.cancel_scope.cancel()


async def test_with_a_token_any_host_may_ask(stored_site: Site) -> None:
    """The token is the guard then (a view on 0.0.0.0 is reached by any name)."""
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            url = await nursery.start(serve, stored_site, parse_listen("127.0.0.1:0", "s3cret"))
            async with httpx.AsyncClient(base_url=url, timeout=30) as client:
                headers = {"Host": "arena.lan:8080", "Authorization": "Bearer s3cret"}
                assert (await client.get("/", headers=headers)).status_code == 200
                denied = await client.get("/", headers={"Host": "arena.lan:8080"})
                assert denied.status_code == 401 and "x-frame-options" in denied.headers
            nursery.cancel_scope.cancel()


SECURITY = {
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-resource-policy": "same-origin",
}


async def test_every_answer_carries_the_security_headers(stored_site: Site) -> None:
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            url = await nursery.start(serve, stored_site, parse_listen("127.0.0.1:0"))
            async with httpx.AsyncClient(base_url=url, timeout=30) as client:
                page = await client.get("/t/stored")
                scripts = [
                    s for s in page.text.split("<script")[1:] if 'type="application/json"' not in s
                ]
                assert scripts and all(s.startswith(' src="/static/') for s in scripts)
                assert "<style" not in page.text and " style=" not in page.text
                static = await client.get(scripts[0].split('"')[1])
                assert static.headers["content-type"].startswith("text/javascript")
                assert "immutable" in static.headers["cache-control"]
                for path, status in (
                    ("/", 200),
                    ("/t/stored", 200),
                    ("/t/stored/games", 200),
                    ("/ratings", 200),
                    ("/static/style.css", 200),
                    ("/t/nope", 404),
                    ("/static/nope.js", 404),
                    ("/t/stored/games?offset=-1", 400),
                ):
                    answer = await client.get(path)
                    assert answer.status_code == status, path
                    for name, value in SECURITY.items():
                        assert answer.headers[name] == value, (path, name)
                    csp = answer.headers["content-security-policy"]
                    assert "default-src 'none'" in csp and "script-src 'self';" in csp
                    assert "frame-ancestors 'none'" in csp and "unsafe" not in csp
            nursery.cancel_scope.cancel()


async def test_paging_and_filter_parameters_are_range_checked(stored_site: Site) -> None:
    bad = {
        "/t/stored/games?offset=9223372036854775808": "offset",
        "/t/stored/games?offset=-1": "offset",
        "/t/stored/games?offset=abc": "offset",
        "/t/stored/games?limit=501": "limit",
        "/t/stored/games?limit=-5": "limit",
        "/t/stored/games?result=2-0": "result",
        "/t/stored/games?faulted=maybe": "faulted",
        "/t/stored/games?reason=x%27%20OR%201=1": "reason",
        "/t/stored/games?player=../../etc": "player",
        "/t/stored/replay": "key",
        "/ratings/games/a?offset=9223372036854775808": "offset",
        "/ratings/games/a?limit=100000": "limit",
    }
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            url = await nursery.start(serve, stored_site, parse_listen("127.0.0.1:0"))
            async with httpx.AsyncClient(base_url=url, timeout=30) as client:
                for path, name in bad.items():
                    answer = await client.get(path)
                    assert answer.status_code == 400, (path, answer.text)
                    error = answer.json()["error"]
                    assert f"`{name}`" in error and "\n" not in error, (path, error)
                fine = await client.get(
                    "/t/stored/games?offset=2&limit=500&player=a&result=1-0&faulted=0"
                    "&reason=home-row&token=ignored"
                )
                assert fine.status_code == 200 and fine.json()["offset"] == 2
                far = (await client.get("/t/stored/games?offset=1000000000")).json()
                assert far["games"] == [] and far["total"] == 6
                # An unknown parameter (``bot`` for ``player``) is named, with the known ones.
                unknown = {
                    "/t/stored/games?bot=a": (
                        "unknown query parameter `bot` "
                        "(known: offset, limit, player, reason, result, faulted, blunder)"
                    ),
                    "/t/stored/replay?key=k&game=1": "unknown query parameter `game` (known: key)",
                    "/ratings/games/a?page=2": (
                        "unknown query parameter `page` (known: offset, limit)"
                    ),
                }
                for path, error in unknown.items():
                    answer = await client.get(path)
                    assert answer.status_code == 400, (path, answer.text)
                    assert answer.json() == {"error": error}
            nursery.cancel_scope.cancel()


# --------------------------------------------------------------------------- a path prefix

LINKS = {
    "/": ["/", "/live", "/ratings", "/static/pictures.js", "/static/replay.js"]
    + ["/static/style.css", "/t/stored"],
    "/live": ["/", "/live", "/ratings", "/static/live.js", "/static/pictures.js"]
    + ["/static/replay.js", "/static/style.css"],
    "/t/stored": ["/", "/live", "/ratings", "/static/games.js", "/static/pictures.js"]
    + ["/static/replay.js", "/static/style.css", "/static/tournament.js"],
    "/ratings": ["/", "/live", "/ratings"]
    + [f"/ratings/player/slow%20%5B{p}%5D" for p in "abc"]
    + ["/static/pictures.js", "/static/replay.js", "/static/style.css"],
    "/ratings/player/slow%20%5Ba%5D": ["/", "/live", "/ratings"]
    + [f"/ratings/player/slow%20%5B{p}%5D" for p in "bc"]
    + ["/static/games.js", "/static/pictures.js", "/static/player.js", "/static/replay.js"]
    + ["/static/style.css"],
}
"""Every address each page names (``href``/``src``, past the static files' ``?v=``;
not in-page ``#`` links nor ``data:``), as the view named them before a prefix
could be set: a known answer."""


def page_links(html: str) -> list[str]:
    found = re.findall(r'(?:href|src)="([^"#][^"]*)"', html)
    return sorted({re.sub(r"\?v=[0-9a-f]+$", "", link) for link in found} - {"data:,"})


async def view_links(site: Site, listen: Listen) -> dict[str, Any]:
    """Each page's links, its ``data-root``, where ``/live/`` redirects, and the
    token cookie's path (with a token) of the view ``serve`` makes for ``listen``."""
    out: dict[str, Any] = {}
    auth = {"Authorization": f"Bearer {listen.token}"} if listen.token else {}
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            url = await nursery.start(serve, site, listen)
            async with httpx.AsyncClient(base_url=url, timeout=30, headers=auth) as client:
                for path in LINKS:
                    answer = await client.get(path)
                    assert answer.status_code == 200, path
                    root = re.search(r'<html lang="en" data-root="([^"]*)">', answer.text)
                    out[path] = (page_links(answer.text), root and root.group(1))
                out["redirect"] = (await client.get("/live/")).headers["location"]
                unstripped = await client.get("/cup/live")  # a proxy that kept the prefix
                out["unstripped"] = (unstripped.status_code, unstripped.text)
                if listen.token:
                    cookie = await client.get(f"/?token={listen.token}", headers={})
                    out["cookie"] = cookie.headers["set-cookie"]
            nursery.cancel_scope.cancel()
    return out


@pytest.fixture(scope="module")
def live_site(stored_site: Site) -> Site:
    """The stored tournament shown as if it were running (the live link, the live page)."""
    return Site(stored_site.tournaments, hub=LiveHub(), live_name="stored")


async def test_without_a_public_path_every_page_links_as_before(live_site: Site) -> None:
    links = await view_links(live_site, parse_listen("127.0.0.1:0"))
    assert {path: links[path] for path in LINKS} == {
        path: (known, "") for path, known in LINKS.items()
    }
    assert links["redirect"] == "/live"  # the browser's own host and scheme
    assert links["unstripped"] == (404, "Not Found")
    # behind a proxy at the host's root: as without one, the cookie for the whole host
    root = await view_links(live_site, parse_listen("127.0.0.1:0", public="https://a.example/"))
    assert {path: root[path] for path in LINKS} == {
        path: (known, "") for path, known in LINKS.items()
    }
    assert root["redirect"] == "/live" and "Path=/;" in root["cookie"]


async def test_under_a_public_path_every_page_links_under_it(live_site: Site) -> None:
    """``--public-url https://host/cup/``: the proxy strips ``/cup``, the arena routes
    at ``/`` as ever, and every address a page names, the redirect and the token's
    cookie are under ``/cup``."""
    listen = parse_listen("127.0.0.1:0", public="https://arena.example/cup/")
    assert listen.prefix == "/cup"
    links = await view_links(live_site, listen)
    assert {path: links[path] for path in LINKS} == {
        path: (["/cup" + link for link in known], "/cup") for path, known in LINKS.items()
    }
    assert links["redirect"] == "/cup/live"
    assert links["unstripped"] == (
        404,
        "no page /cup/live: the proxy in front must strip /cup before it passes a request on "
        "(nginx: location /cup/ with proxy_pass http://HOST:PORT/; ending in a slash; "
        "Caddy: handle_path /cup/*)",
    )
    assert "Path=/cup;" in links["cookie"] and "HttpOnly" in links["cookie"]


def test_the_prefix_is_the_public_urls_path_as_a_browser_sends_it() -> None:
    for public, prefix in (
        (None, ""),
        ("https://a.example", ""),
        ("https://a.example/", ""),
        ("http://a.example:8443/cup/", "/cup"),
        ("https://a.example/games/cup", "/games/cup"),
        ("https://a.example/caf%C3%A9/", "/caf%C3%A9"),
        ("https://a.example/café/", "/caf%C3%A9"),
        ('https://a.example/a"b;c<d>/', "/a%22b%3Bc%3Cd%3E"),  # nothing to break a page or cookie
    ):
        assert parse_listen("127.0.0.1:0", public=public).prefix == prefix, public


def test_a_remote_movers_latency_reaches_the_live_page() -> None:
    from arena.games import get_game

    hub = LiveHub()
    state = get_game("kamisado").new_state(None)
    hub.game_event(GameStarted("r/1", "kamisado", "v", ["far", "b"], state.to_text(), [], 0.0))
    action = state.legal_actions()[0]
    state.apply_action(action)
    moved = GameMoved("r/1", 1, 0, action, 5, False, state.to_text(), [9, 8], 1.0, rtt_ms=41.5)
    hub.game_event(moved)
    payload = hub.game_payload("r/1")
    assert payload is not None and payload["last"]["rtt"] == 41.5
