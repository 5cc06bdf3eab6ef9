"""The live web view shows who of the remote entrants is here, in a real browser,
against a real ``arena run --web`` and real ``arena connect`` processes: not yet
connected during the pre-flight, connected with its round trip, a lost
connection while its author's side is gone, connected again when it is back."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from browser import page_at  # fixtures come from conftest
from test_web_browser import shot, start, stop

BAD_BOT = Path(__file__).with_name("bad_bot.py")
TOKEN = "far-token-0123456789"

TOURNAMENT = """
name = "present"
game = "kamisado"
variant = "single"
tc = "60+0"
games_per_pairing = 4
concurrency = 1
seed = 3

[remote]
connect_timeout = 120
reconnect_s = 120

[[bots]]
name = "near"
command = "builtin:random"

[[bots]]
name = "far"
remote = true
token_env = "FAR_TOKEN"
"""


def states(page) -> str:
    return page.locator("#remote-line").get_attribute("data-states") or ""


def connect(url: str) -> subprocess.Popen[bytes]:
    """``arena connect`` for ``far``: a bot thinking 0.15 s a move, so games last."""
    bot = [sys.executable, str(BAD_BOT), "sleep_each", "0.15"]
    return subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "connect", url.removesuffix("/live")]
        + ["--name", "far", "--sandbox", "none", "--max-backoff", "1", "--", *bot],
        env={**os.environ, "ARENA_TOKEN": TOKEN},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def test_the_live_page_shows_which_remote_entrants_are_here(browser, tmp_path: Path) -> None:
    (tmp_path / "t.toml").write_text(TOURNAMENT)
    os.environ["FAR_TOKEN"] = TOKEN  # inherited by the arena started below
    try:
        process, said = start(
            ["run", "t.toml", "--quiet", "--no-report", "--web", "127.0.0.1:0"], tmp_path
        )
    finally:
        del os.environ["FAR_TOKEN"]
    url = said.split()[0]  # then: (remote entrants: arena connect ...)
    clients: list[subprocess.Popen[bytes]] = []
    try:
        with page_at(browser, 1400) as (page, errors):
            page.goto(url)
            wait = "s => document.getElementById('remote-line').dataset.states === s"
            page.wait_for_function(wait, arg="far=absent", timeout=30_000)
            line = page.locator("#progress-line")
            assert line.get_attribute("data-state") == "starting"
            assert line.inner_text() == "starting: every entrant is checked before the first game"
            assert page.locator("#remote-line").inner_text() == "remote: far not connected"
            shot(page, tmp_path, "remote-absent-1400.png")

            clients.append(connect(url))
            page.wait_for_function(wait, arg="far=connected", timeout=60_000)
            page.wait_for_function(  # a game of far's under way
                "() => document.querySelectorAll('.card[data-ply]').length >= 1"
                " && document.getElementById('progress-line').dataset.state === 'running'",
                timeout=60_000,
            )
            page.wait_for_function(  # and its round trip, once measured
                "() => /^remote: far connected \\(\\d+\\.\\d ms\\)$/"
                ".test(document.getElementById('remote-line').textContent)",
                timeout=30_000,
            )

            os.killpg(clients[0].pid, signal.SIGKILL)  # its author's side is gone
            clients[0].wait(10)
            page.wait_for_function(wait, arg="far=dropped", timeout=30_000)
            assert (
                page.locator("#remote-line").inner_text()
                == "remote: far connection lost, may come back"
            )
            shot(page, tmp_path, "remote-dropped-1400.png")

            clients.append(connect(url))  # back within reconnect_s: the game goes on
            page.wait_for_function(wait, arg="far=connected", timeout=60_000)
            page.wait_for_function(
                "() => document.getElementById('progress-line').dataset.state === 'finished'",
                timeout=120_000,
            )
            assert page.locator("#remote-line").is_hidden()  # the run is over
            assert errors == []
        assert process.wait(60) == 0
    finally:
        for client in clients:
            if client.poll() is None:
                os.killpg(client.pid, signal.SIGKILL)
                client.wait(10)
        stop(process)
    store = tmp_path / "results" / "present" / "games.sqlite"
    import sqlite3

    with sqlite3.connect(store) as db:
        reasons = [r for (r,) in db.execute("SELECT reason FROM games")]
    assert len(reasons) == 4 and "disconnect" not in reasons, reasons
