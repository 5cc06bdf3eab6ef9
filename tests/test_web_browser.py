"""The web view in a real browser (chromium via Playwright), against the real
``arena run --web`` and ``arena serve`` commands: what a user sees."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser import overflow, page_at, window_tabs  # fixtures come from conftest
from procs import listening_port

BAD_BOT = Path(__file__).with_name("bad_bot.py")
SHOTS = Path(os.environ["ARENA_SCREENSHOTS"]) if os.environ.get("ARENA_SCREENSHOTS") else None


def shot(page, tmp_path: Path, name: str) -> None:
    """Screenshots go to the test's folder (and to $ARENA_SCREENSHOTS, to look at)."""
    for folder in (tmp_path, SHOTS):
        if folder is not None:
            folder.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(folder / name), full_page=True)


def start(args: list[str], cwd: Path) -> tuple[subprocess.Popen[str], str]:
    """Start an arena command that serves the web view; return it and its URL."""
    process = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", *args],
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    for line in process.stderr:
        if line.startswith("web view: "):
            return process, line.split(": ", 1)[1].strip()
    process.wait(10)
    pytest.fail(f"the arena printed no web address (exit {process.returncode})")


def stop(process: subprocess.Popen[str]) -> None:
    if process.poll() is None:
        process.terminate()
        process.wait(20)


@pytest.fixture
def slow_tournament(tmp_path: Path) -> Path:
    toml = tmp_path / "live.toml"
    bot = [sys.executable, str(BAD_BOT), "sleep_each", "0.04"]
    toml.write_text(
        f"""
name = "live"
variant = "single"
tc = "30+0"
games_per_pairing = 2
concurrency = 2
seed = 11
[[bots]]
name = "alpha"
command = {bot!r}
[[bots]]
name = "beta"
command = {bot!r}
[[bots]]
name = "gamma"
command = ["builtin:random"]
""".replace("'", '"')
    )
    return toml


def test_live_page_follows_a_running_tournament(
    browser,
    tmp_path: Path,
    slow_tournament: Path,
) -> None:
    process, url = start(
        [
            "run",
            str(slow_tournament),
            "--results",
            str(tmp_path / "results"),
            "--quiet",
            "--no-report",
            "--web",
            "127.0.0.1:0",
        ],
        tmp_path,
    )
    try:
        with page_at(browser, 1400) as (page, errors):
            page.goto(url)
            # One look picks a game under way and reads its key and board: a card
            # found first and checked after may belong to a game that ended in
            # between (a game against the random bot lasts a second), and a
            # finished game's card is gone.
            key, first = page.wait_for_function(
                "() => { const c = [...document.querySelectorAll('.card[data-ply]')].find("
                "c => +c.dataset.ply >= 2 && c.querySelectorAll('g.tower').length === 16"
                # a game under way shows both clocks as m:ss.s
                " && [...c.querySelectorAll('.clock')].every(k => /^\\d+:\\d\\d\\.\\d$/"
                ".test(k.textContent)));"
                " return c && [c.dataset.key, [...c.querySelectorAll('g.tower')]"
                ".map(t => t.dataset.square).join()]; }",
                timeout=30_000,
            ).json_value()
            page.wait_for_function(
                "([k, before]) => { const c = document.querySelector(`.card[data-key='${k}']`);"
                " return !c || [...c.querySelectorAll('g.tower')]"
                ".map(t => t.dataset.square).join() !== before; }",
                arg=[key, first],
                timeout=30_000,
            )  # the board changed (or the game ended)
            page.wait_for_function("() => window.arenaLive.finished >= 1", timeout=30_000)
            page.wait_for_function(
                "() => document.querySelectorAll('#recent tbody tr').length >= 1"
                " && document.querySelectorAll('#live-standings tbody tr').length === 3",
                timeout=30_000,
            )
            assert "of 6 games" in page.locator("#progress-line").inner_text()
            shot(page, tmp_path, "live-1400.png")
            with page_at(browser, 420) as (narrow, narrow_errors):
                narrow.goto(url)
                narrow.locator("#live-standings tbody tr").first.wait_for(timeout=30_000)
                shot(narrow, tmp_path, "live-420.png")
                assert overflow(narrow)["wide"] == []
                assert narrow_errors == []
            page.wait_for_function(
                "() => document.getElementById('progress-line').dataset.state === 'finished'",
                timeout=60_000,
            )
            assert page.locator("#progress-line").get_attribute("data-done") == "6"
            assert errors == []
        assert process.wait(60) == 0
    finally:
        stop(process)


WRAP_EVENT_SOURCE = """
window.__sources = []; window.__games = {};
const Real = window.EventSource;
window.EventSource = class extends Real {  // keeps the page's stream and its games' payloads
  constructor(...args) {
    super(...args); window.__sources.push(this);
    const keep = g => { window.__games[g.key] = g; };
    this.addEventListener("snapshot", ev => JSON.parse(ev.data).games.forEach(keep));
    this.addEventListener("game", ev => keep(JSON.parse(ev.data)));
  }
};
"""

COALESCE = """async () => {
  const source = window.__sources[0], games = Object.values(window.__games);
  const send = (g, ply) => source.dispatchEvent(new MessageEvent("game",
      {data: JSON.stringify({...g, ply, t: Date.now() / 1000})}));
  for (let ply = 1; ply <= 5; ply++) send(games[0], ply);  // one task: no frame between
  send(games[1], 1);
  const before = window.arenaLive.moves;
  await new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  const ply = k => document.querySelector(`.card[data-key='${k}']`).dataset.ply;
  return {before, after: window.arenaLive.moves, plies: [ply(games[0].key), ply(games[1].key)]};
}"""


@pytest.fixture
def still_live(tmp_path: Path) -> Iterator[str]:
    """The live page's URL of a run of four bots that never answer: two games
    at once, both staying at ply 0 (a test dispatches the moves itself)."""
    toml = tmp_path / "still.toml"
    bot = [sys.executable, str(BAD_BOT), "sleep_each", "600"]
    toml.write_text(
        'name = "still"\nvariant = "single"\ntc = "900+0"\nconcurrency = 2\n'
        + "".join(f'[[bots]]\nname = "{n}"\ncommand = {bot!r}\n' for n in "abcd").replace("'", '"')
    )
    process, url = start(
        [
            "run",
            str(toml),
            "--results",
            str(tmp_path / "results"),
            "--quiet",
            "--no-report",
            "--web",
            "127.0.0.1:0",
        ],
        tmp_path,
    )
    try:
        yield url
    finally:
        stop(process)


def test_live_page_draws_each_game_once_a_frame_at_its_latest_move(
    browser, still_live: str
) -> None:
    """Moves that arrive faster than the browser draws are not queued: each frame
    draws each game once, at its latest move (a busy page stays current instead of
    falling seconds behind). Bots that never answer keep the real games at ply 0;
    the moves are dispatched on the page's own event stream."""
    with page_at(browser, 1400) as (page, errors):
        page.add_init_script(WRAP_EVENT_SOURCE)
        page.goto(still_live)
        page.wait_for_function("() => Object.keys(window.__games).length === 2", timeout=30_000)
        drawn = page.evaluate(COALESCE)
        assert drawn == {"before": 0, "after": 2, "plies": ["5", "1"]}
        assert errors == []


SKIPPED = """async () => {
  const source = window.__sources[0], g = Object.values(window.__games)[0];
  const tower = (side, n) => Object.keys(g.frame).filter(k => k.length === 2 && k[0] === side)[n];
  const [b, o] = [tower("b", 0), tower("g", 0)];
  const at = (f, k, square) => ({...f, [k]: square});
  const file = k => g.frame[k][0];
  const f1 = {...at(g.frame, b, file(b) + "3"), m: "g"};
  const f2 = {...at(f1, o, file(o) + "5"), m: "b"};
  const f3 = {...at(f2, b, file(b) + "4"), m: "g"};
  const send = (frame, ply, player, action) => {
    const last = {player, action, ms: 1, forced: false};
    const data = JSON.stringify({...g, ply, frame, t: Date.now() / 1000, last});
    source.dispatchEvent(new MessageEvent("game", {data}));
  };
  const frames = () => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(r)));
  send(f1, 1, 0, g.frame[b] + "-" + f1[b]);
  await frames();
  send(f2, 2, 1, g.frame[o] + "-" + f2[o]);  // one task: ply 2 is never drawn
  send(f3, 3, 0, f2[b] + "-" + f3[b]);
  await frames();
  const card = document.querySelector(`.card[data-key='${g.key}']`);
  const mark = cls => card.querySelector("rect.last-move." + cls).dataset.square;
  return {ply: card.dataset.ply, marked: [mark("from"), mark("to")], moved: [f2[b], f3[b]]};
}"""


def test_live_page_marks_the_last_move_when_it_skipped_plies(browser, still_live: str) -> None:
    """A page drawing ply 3 over ply 1 (ply 2 came in the same frame) marks the
    move of ply 3, as the event names it. Found in review: the mark was guessed
    by comparing boards, which showed the other side's ply-2 move."""
    with page_at(browser, 1400) as (page, errors):
        page.add_init_script(WRAP_EVENT_SOURCE)
        page.goto(still_live)
        page.wait_for_function("() => Object.keys(window.__games).length === 2", timeout=30_000)
        drawn = page.evaluate(SKIPPED)
        assert drawn["ply"] == "3"
        assert drawn["marked"] == drawn["moved"]
        assert errors == []


SHOWN = (
    "n => !document.hidden && window.arenaLive.snapshots === n"
    " && document.querySelectorAll('#boards .card').length === 2"
)


def test_live_page_in_more_tabs_than_the_browser_gives_a_server_connections(
    playwright, still_live: str
) -> None:
    """A browser gives a server six HTTP/1.1 connections and an event stream holds
    one for as long as it is open: with the live page open in six tabs, a seventh
    tab (or any other page of the server) waited forever. A hidden tab holds no
    stream; shown, it connects and its snapshot shows the present."""
    with window_tabs(playwright, 8) as (tabs, errors):
        for tab in tabs:
            tab.goto(still_live, timeout=15_000)  # the seventh tab never loaded
        front, last = tabs[0], tabs[-1]
        front.wait_for_function(SHOWN, arg=1, polling=50, timeout=30_000)
        hidden = [tab.evaluate("[document.hidden, window.arenaLive.snapshots]") for tab in tabs]
        assert hidden == [[False, 1]] + [[True, 0]] * 7
        last.bring_to_front()
        last.wait_for_function(SHOWN, arg=1, polling=50, timeout=30_000)
        assert front.evaluate("document.hidden")
        front.bring_to_front()  # shown again: a new stream, a new snapshot
        front.wait_for_function(SHOWN, arg=2, polling=50, timeout=30_000)
        assert errors == []


@pytest.fixture
def stored(tmp_path: Path) -> Path:
    toml = tmp_path / "club.toml"
    toml.write_text(
        """
name = "club"
variant = "single"
tc = "10+0"
games_per_pairing = 4
concurrency = 2
seed = 4
[openings]
plies = 2
[[bots]]
name = "random"
command = "builtin:random"
[[bots]]
name = "greedy"
command = "builtin:greedy"
[[bots]]
name = "random2"
command = "builtin:random"
args = ["--seed", "9"]
"""
    )
    subprocess.run(
        [
            sys.executable,
            "-m",
            "arena.cli",
            "run",
            str(toml),
            "--results",
            "results",
            "-q",
            "--no-report",
        ],
        cwd=tmp_path,
        check=True,
        capture_output=True,
        timeout=120,
    )
    return tmp_path / "results"


def test_stored_tournament_filter_and_replay(
    browser,
    tmp_path: Path,
    stored: Path,
) -> None:
    process, url = start(["serve", str(stored), "--listen", "127.0.0.1:0"], tmp_path)
    try:
        with page_at(browser, 1400) as (page, errors):
            page.goto(url)
            page.click("a[href='/t/club']")
            page.wait_for_function(
                "() => document.getElementById('page-info').dataset.total === '12'", timeout=20_000
            )
            assert page.locator("#standings-table tbody tr").count() == 3
            page.select_option("select[name=player]", "greedy")
            page.wait_for_function(
                "() => document.getElementById('page-info').dataset.total === '8'", timeout=20_000
            )
            rows = page.locator("#games-paged tbody tr.game")
            assert rows.count() == 8
            for text in rows.all_inner_texts():
                assert "greedy" in text
            rows.first.locator("button.open").click()
            viewer = page.locator(".viewer")
            viewer.locator("svg.board g.tower").first.wait_for(timeout=20_000)
            assert viewer.get_attribute("data-ply") == "0"
            before = viewer.locator("g.towers").inner_html()
            next_button = viewer.locator("button[title=next]")
            next_button.click()
            next_button.click()
            assert viewer.get_attribute("data-ply") == "2"
            assert viewer.locator("g.towers").inner_html() != before
            assert "ply 2/" in viewer.locator(".status").inner_text()
            viewer.press("End")
            last = int(viewer.get_attribute("data-ply") or 0)
            assert last == viewer.locator("ol.moves li").count() and last > 2
            shot(page, tmp_path, "tournament-1400.png")
            assert errors == []
        with page_at(browser, 420) as (page, errors):
            page.goto(url + "t/club")
            page.locator("#games-paged tbody tr.game").first.locator("button.open").click()
            page.locator(".viewer svg.board").wait_for(timeout=20_000)
            shot(page, tmp_path, "tournament-420.png")
            assert overflow(page)["wide"] == []
            assert errors == []
    finally:
        stop(process)


# --------------------------------------------------------------------------- under a path prefix

PREFIX_PROXY = Path(__file__).with_name("prefix_proxy.py")
FAR_TOKEN = "far-token-0123456789"


@pytest.fixture
def prefix_proxy() -> Iterator[tuple[subprocess.Popen[str], int]]:
    """``tests/prefix_proxy.py`` serving ``/cup``, and its port; it is told the
    arena's port on its standard input."""
    proxy = subprocess.Popen(
        [sys.executable, str(PREFIX_PROXY), "/cup"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proxy.stdout is not None
        yield proxy, int(proxy.stdout.readline())
    finally:
        proxy.kill()
        proxy.wait(10)


def watch(page, public: str) -> tuple[list[str], list[str]]:
    """Every address ``page`` asks for, and every request that failed or got a
    status of 400 or more (but the live page's stream, cut as the page is left)."""
    asked: list[str] = []
    failed: list[str] = []
    page.on("request", lambda r: asked.append(r.url))
    page.on(
        "requestfailed",
        lambda r: (
            None
            if r.url.startswith(public + "live/events") and r.failure == "net::ERR_ABORTED"
            else failed.append(f"{r.url}: {r.failure}")
        ),
    )
    page.on("response", lambda r: r.status >= 400 and failed.append(f"{r.url}: {r.status}"))
    return asked, failed


def test_the_web_view_under_a_path_prefix(
    browser, tmp_path: Path, prefix_proxy: tuple[subprocess.Popen[str], int]
) -> None:
    """Behind a proxy serving the arena at ``/cup/`` (and stripping it, as nginx's
    ``proxy_pass http://127.0.0.1:PORT/;`` does), every page works from the printed
    address: the live page follows the run through the proxy (its event stream),
    where a remote entrant plays, connected with ``arena connect`` to the proxy's
    address (its WebSocket through the proxy too), the tournament page pages its
    games and opens a replay, the rating list links to a player page that pages
    its games, and each link followed stays under ``/cup/``. Every request the
    browser makes is under it, none fails, and no page logs an error; the proxy
    answers anything else with a 404."""
    proxy, port = prefix_proxy
    public = f"http://127.0.0.1:{port}/cup/"
    toml = tmp_path / "cup.toml"
    bot = [sys.executable, str(BAD_BOT), "sleep_each", "0.03"]
    toml.write_text(
        'name = "cup-live"\nvariant = "single"\ntc = "30+0"\ngames_per_pairing = 30\n'
        + "concurrency = 2\nseed = 5\n[remote]\nconnect_timeout = 60\n"
        + f'[[bots]]\nname = "alpha"\ncommand = {bot!r}\n'.replace("'", '"')
        + '[[bots]]\nname = "far"\nremote = true\ntoken_env = "FAR_TOKEN"\n'
        + '[[bots]]\nname = "gamma"\ncommand = ["builtin:random"]\n'
    )
    web = ["--web", "127.0.0.1:0", "--trust-proxy", "127.0.0.1", "--public-url", public]
    args = ["run", str(toml), "--results", str(tmp_path / "results"), "-q", "--no-report"]
    os.environ["FAR_TOKEN"] = FAR_TOKEN  # inherited by the arena started below
    try:
        process, said = start([*args, *web], tmp_path)
    finally:
        del os.environ["FAR_TOKEN"]
    url = said.split()[0]  # then: (remote entrants: arena connect URL --name NAME)
    author = None
    try:
        assert url.startswith(public + "live?token=")
        assert f"arena connect {public.removesuffix('/')} --name NAME" in said
        arena_port = listening_port(process.pid)
        assert proxy.stdin is not None and arena_port is not None
        proxy.stdin.write(f"{arena_port}\n")
        proxy.stdin.flush()
        author = subprocess.Popen(
            [sys.executable, "-m", "arena.cli", "connect", public, "--name", "far"]
            + ["--sandbox", "none", "--", *bot],
            env={**os.environ, "ARENA_TOKEN": FAR_TOKEN},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        with page_at(browser, 1400) as (page, errors):
            asked, failed = watch(page, public)
            page.goto(url)
            page.wait_for_function(
                "() => document.getElementById('remote-line').dataset.states === 'far=connected'",
                timeout=30_000,
            )
            page.wait_for_function(
                "() => window.arenaLive.moves >= 3 && window.arenaLive.finished >= 2"
                " && document.querySelectorAll('#recent tbody td.result').length >= 2",
                timeout=30_000,
            )
            shot(page, tmp_path, "prefix-live-1400.png")
            page.locator("header nav a", has_text="tournaments").click()
            page.wait_for_url(public)
            page.locator("#tournaments a", has_text="cup-live").click()
            page.wait_for_url(public + "t/cup-live")
            page.wait_for_function(
                "() => +document.getElementById('page-info').dataset.total >= 2", timeout=20_000
            )
            page.locator("#games-paged tr.game button.open").first.click()
            page.locator(".viewer svg.board g.tower").first.wait_for(timeout=20_000)
            shot(page, tmp_path, "prefix-tournament-1400.png")
            page.locator("header nav a", has_text="ratings").click()
            page.wait_for_url(public + "ratings")
            page.locator("a[href*='/ratings/player/']", has_text="alpha").first.click()
            page.wait_for_url(public + "ratings/player/*alpha*")  # "testbot 1 [alpha]"
            page.wait_for_function(
                "() => +document.getElementById('page-info').dataset.total >= 1", timeout=20_000
            )
            page.locator("#games-paged tr.game a", has_text="cup-live").first.wait_for()
            page.locator("#games-paged tr.game button.open").first.click()
            page.locator(".viewer svg.board g.tower").first.wait_for(timeout=20_000)
            shot(page, tmp_path, "prefix-player-1400.png")
            page.locator("header nav a", has_text="live").click()
            page.wait_for_url(public + "live")
            page.wait_for_function("() => window.arenaLive.snapshots === 1", timeout=20_000)
            with page_at(browser, 420) as (narrow, narrow_errors):
                narrow.goto(url)
                narrow.locator("#live-standings tbody tr").first.wait_for(timeout=20_000)
                shot(narrow, tmp_path, "prefix-live-420.png")
                assert narrow_errors == []
            assert failed == []
            assert errors == []
            assert len(asked) > 20 and [a for a in asked if not a.startswith(public)] == []
    finally:
        stop(process)
        if author is not None:
            author.kill()
            author.wait(20)


def test_arena_serve_under_a_path_prefix(
    browser, tmp_path: Path, stored: Path, prefix_proxy: tuple[subprocess.Popen[str], int]
) -> None:
    """``arena serve --public-url`` behind the same proxy: the list of tournaments,
    a tournament's games and a replay, the rating list, all under ``/cup/``."""
    proxy, port = prefix_proxy
    public = f"http://127.0.0.1:{port}/cup/"
    args = ["serve", str(stored), "--listen", "127.0.0.1:0", "--public-url", public]
    process, url = start(args, tmp_path)
    try:
        assert url.startswith(public + "?token=")
        arena_port = listening_port(process.pid)
        assert proxy.stdin is not None and arena_port is not None
        proxy.stdin.write(f"{arena_port}\n")
        proxy.stdin.flush()
        with page_at(browser, 1400) as (page, errors):
            asked, failed = watch(page, public)
            page.goto(url)
            page.locator("#tournaments a", has_text="club").click()
            page.wait_for_url(public + "t/club")
            page.wait_for_function(
                "() => document.getElementById('page-info').dataset.total === '12'", timeout=20_000
            )
            page.locator("#games-paged tr.game button.open").first.click()
            page.locator(".viewer svg.board g.tower").first.wait_for(timeout=20_000)
            page.locator("header nav a", has_text="ratings").click()
            page.wait_for_url(public + "ratings")
            page.locator("header nav a", has_text="tournaments").click()
            page.wait_for_url(public)
            assert failed == []
            assert errors == []
            assert len(asked) > 10 and [a for a in asked if not a.startswith(public)] == []
    finally:
        stop(process)
