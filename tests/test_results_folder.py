"""A results folder from elsewhere is data (issue 33): nothing the arena writes
there follows a link planted in it, a cache it did not write is not believed, a
hostile store cannot hang a reader, its text reaches no terminal or Markdown
reader raw, and no address it names is connected to.

The stores are real (the Store API, games played through the rules core) and the
commands run as the operator runs them: ``python -m arena.cli`` in a subprocess.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from test_report import round_robin

from arena.storage.store import Store

TARGET_TEXT = "the operator's file\n"


def arena(*args: str, timeout: float = 120, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "arena.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=cwd,
    )


def one_line_error(result: subprocess.CompletedProcess, *words: str) -> str:
    """The command failed with exactly one line on stderr, naming ``words``."""
    assert result.returncode != 0, result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert lines[0].startswith("arena: error: "), lines
    for word in words:
        assert word in lines[0], lines
    return lines[0]


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real store: three bots, two rounds, one crash."""
    directory = tmp_path_factory.mktemp("played") / "cup"
    round_robin(directory, rounds=1)
    return directory


@pytest.fixture
def received(played: Path, tmp_path: Path) -> Path:
    """A copy of the store, as it might be handed over."""
    folder = tmp_path / "received"
    folder.mkdir()
    shutil.copy(played / "games.sqlite", folder / "games.sqlite")
    return folder


@pytest.fixture
def target(tmp_path: Path) -> Path:
    """A file of the operator's a planted link points at."""
    path = tmp_path / "elsewhere" / "bashrc"
    path.parent.mkdir()
    path.write_text(TARGET_TEXT)
    return path


# -- 1. nothing is written through a link ---------------------------------------------


@pytest.mark.parametrize("name", ["report.md.tmp", "report.html.tmp", "report.md", "report.html"])
def test_a_link_where_a_report_is_written_is_refused(
    received: Path, target: Path, name: str
) -> None:
    (received / name).symlink_to(target)
    result = arena("report", str(received))
    one_line_error(result, name, "symbolic link")
    assert target.read_text() == TARGET_TEXT
    assert (received / name).is_symlink()


def test_a_dangling_link_where_a_report_is_written_creates_nothing(
    received: Path, tmp_path: Path
) -> None:
    """O_EXCL: a link to a file that does not exist yet is not created through."""
    nowhere = tmp_path / "elsewhere" / "new-file"
    nowhere.parent.mkdir()
    (received / "report.md.tmp").symlink_to(nowhere)
    one_line_error(arena("report", str(received)), "report.md.tmp")
    assert not nowhere.exists()


def test_a_stale_temporary_file_is_replaced(received: Path) -> None:
    """A report writer killed halfway leaves ``report.md.tmp``: the next one goes on."""
    (received / "report.md.tmp").write_text("half a report")
    result = arena("report", str(received))
    assert result.returncode == 0, result.stderr
    assert (received / "report.md").read_text().startswith("# cup\n")
    assert not (received / "report.md.tmp").exists()


@pytest.mark.parametrize("name", ["ratings.md.tmp", "ratings.html.tmp", "ratings.md"])
def test_a_link_where_a_rating_list_is_written_is_refused(
    received: Path, target: Path, name: str
) -> None:
    (received / name).symlink_to(target)
    result = arena("ratings", str(received), "--out", str(received))
    one_line_error(result, name, "symbolic link")
    assert target.read_text() == TARGET_TEXT


@pytest.mark.parametrize("linked", ["folder", "stores.cache", "fits.json"])
def test_a_linked_ratings_cache_is_refused(
    received: Path, tmp_path: Path, target: Path, linked: str
) -> None:
    """``.ratings-cache`` lives in the results folder (or its parent): a link there,
    or in it, would have the cache written where the sender chose."""
    root = tmp_path / "root"
    root.mkdir()
    shutil.move(received, root / "received")
    cache = root / ".ratings-cache"
    if linked == "folder":
        elsewhere = target.parent / "cache"
        elsewhere.mkdir()
        cache.symlink_to(elsewhere)
    else:
        cache.mkdir()
        (cache / linked).symlink_to(target)
        elsewhere = target.parent
    before = sorted(p.name for p in elsewhere.iterdir())
    result = arena("ratings", str(root), "--out", str(tmp_path))
    one_line_error(result, ".ratings-cache", "symbolic link")
    assert sorted(p.name for p in elsewhere.iterdir()) == before
    assert target.read_text() == TARGET_TEXT


def test_a_linked_analysis_is_refused(received: Path, target: Path, tmp_path: Path) -> None:
    """SQLite would follow ``analysis.sqlite`` and create its files where it points."""
    (received / "analysis.sqlite").symlink_to(target)
    result = arena("analyze", str(received), "--budget-ms", "1", "--workers", "1")
    one_line_error(result, "analysis.sqlite", "symbolic link")
    assert target.read_text() == TARGET_TEXT
    assert sorted(p.name for p in target.parent.iterdir()) == ["bashrc"]
    dangling = tmp_path / "elsewhere" / "made.sqlite"
    (received / "analysis.sqlite").unlink()
    (received / "analysis.sqlite").symlink_to(dangling)
    one_line_error(arena("analyze", str(received), "--budget-ms", "1", "--workers", "1"))
    assert not dangling.exists()


def test_a_linked_store_or_lock_is_not_written_by_a_resumed_run(
    played: Path, target: Path, tmp_path: Path
) -> None:
    """``arena run`` resuming a received folder: its lock and database are written."""
    from arena.storage.store import StoreError

    folder = tmp_path / "run"
    folder.mkdir()
    (folder / "lock").symlink_to(target)
    with pytest.raises(StoreError, match="symbolic link"):
        Store.open(folder, name="cup", config_text="", fingerprint="f")
    (folder / "lock").unlink()
    (folder / "games.sqlite").symlink_to(target)
    with pytest.raises(StoreError, match="symbolic link"):
        Store.open(folder, name="cup", config_text="", fingerprint="f")
    assert target.read_text() == TARGET_TEXT


def test_the_export_is_not_written_through_a_link(received: Path, target: Path) -> None:
    (received / "games.jsonl.tmp").symlink_to(target)
    result = arena("export", str(received), "-o", str(received / "games.jsonl"))
    one_line_error(result, "games.jsonl.tmp", "symbolic link")
    assert target.read_text() == TARGET_TEXT


@pytest.mark.parametrize("name", ["rounds.json", "rounds.json.tmp"])
def test_a_swiss_draw_is_not_written_through_a_link(
    name: str, target: Path, tmp_path: Path
) -> None:
    """A Swiss resumed in a received folder writes its draw (``rounds.json``) there."""
    toml = tmp_path / "sw.toml"
    toml.write_text(
        'name = "sw"\nvariant = "single"\ntc = "5+0.1"\nformat = "swiss"\nrounds = 1\n'
        + "".join(
            f'[[bots]]\nname = "r{i}"\ncommand = "builtin:random"\nargs = ["--seed", "{i}"]\n'
            for i in range(2)
        )
    )
    folder = tmp_path / "results" / "sw"
    folder.mkdir(parents=True)
    (folder / name).symlink_to(target)
    result = arena("run", str(toml), "--results", str(tmp_path / "results"), "-q", "--no-report")
    assert result.returncode != 0 and "Traceback" not in result.stderr, result.stderr
    assert name in result.stderr and "symbolic link" in result.stderr, result.stderr
    assert target.read_text() == TARGET_TEXT


# -- 2. a cache the arena did not write is rebuilt ------------------------------------


def test_a_planted_fits_cache_is_not_shown_as_fitted_ratings(received: Path) -> None:
    """The fits cache is keyed by a hash of the games, which a sender can compute:
    a forged fit under that key, in a cache the operator did not write, is not
    believed; the list is fitted again."""
    first = arena("ratings", str(received), "--format", "json")
    assert first.returncode == 0, first.stderr
    fits = received.parent / ".ratings-cache" / "fits.json"
    table = json.loads(fits.read_bytes())
    for fit in table.values():
        fit["ratings"] = [1234.5 + i for i in range(len(fit["ratings"]))]
    forged = json.dumps(table).encode()
    # as received: owned by someone else, or writable by others
    for plant in ("other owner", "group-writable"):
        fits.write_bytes(forged)
        if plant == "other owner":
            os.chown(fits, 4242, 4242)
        else:
            os.chmod(fits, 0o666)
        shown = arena("ratings", str(received), "--format", "json")
        assert shown.returncode == 0, shown.stderr
        assert "1234.5" not in shown.stdout and "1235.5" not in shown.stdout, plant
        assert shown.stdout == first.stdout, plant
        fits.unlink()
    # the same forged file written by the operator is believed: the check is the owner
    fits.write_bytes(forged)
    os.chmod(fits, 0o644)
    believed = arena("ratings", str(received), "--format", "json")
    assert "1234" in believed.stdout


def test_a_planted_stores_cache_is_not_read(received: Path) -> None:
    """The stores cache holds each store's grouped games: planted, it would stand
    in for the games themselves."""
    first = arena("ratings", str(received), "--format", "json")
    assert first.returncode == 0, first.stderr
    cache = received.parent / ".ratings-cache"
    stores = cache / "stores.cache"
    data = bytearray(stores.read_bytes())
    end = data.index(b"\n")
    # every group's count (the last four bytes of a 20-byte row) made 100
    for start in range(end + 1, len(data), 20):
        data[start + 16 : start + 20] = (100).to_bytes(4, "little")
    (cache / "fits.json").unlink()
    stores.write_bytes(bytes(data))
    os.chown(stores, 4242, 4242)
    again = arena("ratings", str(received), "--format", "json")
    assert again.stdout == first.stdout


@pytest.mark.parametrize("version", [float("inf"), b"\x02"], ids=["infinite", "blob"])
def test_a_schema_version_of_any_sqlite_type_is_one_line(received: Path, version: object) -> None:
    """A store decides its own column types: a ``meta`` declared without one gives the
    schema version back as it was stored, a float (``int()`` of an infinite one raises
    OverflowError) or a blob."""
    db = sqlite3.connect(received / "games.sqlite")
    db.executescript(
        "ALTER TABLE meta RENAME TO meta_was;"
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value);"
        "INSERT INTO meta SELECT key, value FROM meta_was; DROP TABLE meta_was;"
    )
    db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (version,))
    db.commit()
    db.close()
    for command in ("report", "ratings", "export"):
        one_line_error(arena(command, str(received)), "schema version")


# -- 3. a hostile store cannot hang a reader ------------------------------------------

ENDLESS = "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT {columns} FROM r"


def make_endless(folder: Path, table: str) -> None:
    """``table`` becomes an endless recursive view with the table's columns."""
    db = sqlite3.connect(folder / "games.sqlite")
    columns = [row[1] for row in db.execute(f"PRAGMA table_info({table})")]
    db.execute(f"ALTER TABLE {table} RENAME TO {table}_real")
    values = ", ".join(f"'x' AS {c}" if c != "score" else "0.5 AS score" for c in columns)
    db.execute(f"CREATE VIEW {table} AS " + ENDLESS.format(columns=values))
    db.commit()
    db.close()


@pytest.mark.parametrize("table", ["games", "tournament", "game_counts"])
def test_a_store_with_a_view_for_a_table_is_refused_at_once(received: Path, table: str) -> None:
    make_endless(received, table)
    for command in (["report"], ["ratings"], ["analyze", "--budget-ms", "1", "--workers", "1"]):
        result = arena(*command, str(received), timeout=30)
        one_line_error(result, "is a view, not a plain table")


def test_a_query_past_its_deadline_is_stopped(
    played: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whatever else a store could make a query do, a reader's query has a deadline."""
    import time

    from arena.storage.store import ReadConnection, StoreError

    monkeypatch.setattr(ReadConnection, "seconds", 0.5)
    with Store.open_existing(played) as store:
        start = time.monotonic()
        with pytest.raises(StoreError, match="longer than 0.5 s"):
            store._rows(ENDLESS.format(columns="n") + " ORDER BY n DESC")
        assert time.monotonic() - start < 5
        assert store.count() > 0  # the next query has its own deadline


def test_serve_answers_beside_an_endless_store(played: Path, tmp_path: Path) -> None:
    """Forty requests for the hostile store's pages, then every other page: all
    answered within seconds (the hostile ones with one line)."""
    import httpx
    import trio

    root = tmp_path / "served"
    (root / "bad").mkdir(parents=True)
    shutil.copytree(played, root / "good")
    shutil.copy(played / "games.sqlite", root / "bad" / "games.sqlite")
    make_endless(root / "bad", "games")
    server = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "serve", str(root), "--listen", "127.0.0.1:0"],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stderr is not None
        line = server.stderr.readline()
        assert line.startswith("web view: "), line
        url = line.split()[-1].rstrip("/")

        async def main() -> dict[str, int]:
            got: dict[str, int] = {}
            async with httpx.AsyncClient(timeout=20) as client:
                with trio.fail_after(20):
                    async with trio.open_nursery() as nursery:
                        for i in range(40):
                            page = ("/t/bad", "/t/bad/games", "/")[i % 3]

                            async def ask(page: str = page, i: int = i) -> None:
                                got[f"{page}#{i}"] = (await client.get(url + page)).status_code

                            nursery.start_soon(ask)
                    for page in ("/", "/t/good", "/t/good/games", "/ratings"):
                        got[page] = (await client.get(url + page)).status_code
                    bad = await client.get(url + "/t/bad")
                    assert "is a view, not a plain table" in bad.text
                    assert len(bad.text.splitlines()) == 1
            return got

        got = trio.run(main)
        assert {k: v for k, v in got.items() if not k.startswith("/t/bad")} == {
            **{k: 200 for k in got if k.startswith("/#")},
            "/": 200,
            "/t/good": 200,
            "/t/good/games": 200,
            "/ratings": 200,
        }
        assert {v for k, v in got.items() if k.startswith("/t/bad")} == {500}
    finally:
        server.terminate()
        server.wait(timeout=10)


# -- 4. stored text reaches no terminal or Markdown reader raw -------------------------

ESCAPES = "\x1b]0;owned\x07\x1b]52;c;b3duZWQ=\x07\x1b]8;;http://evil.example/\x1b\\link\x1b]8;;\x1b\\\x9b31m"
HOSTILE_NAME = f"cup{ESCAPES}\n\necho owned >> ~/.bashrc\n# Fake heading\n<script>alert(1)</script>"
HTML = '<img src=x onerror="alert(1)">'


def hostile_store(folder: Path) -> None:
    """A store as a sender could write it: a tournament name with escape sequences
    and lines of its own; a bot named with HTML, whose illegal action and info
    line are HTML and Markdown links, with the matching identity."""
    import random

    import msgspec
    from test_report import play_random

    from arena.match.record import ActionRecord

    rng = random.Random(3)
    evil, plain = f"evil {HTML}", "plain"
    identity = {"name": f"<b>{HTML}</b>", "version": "[x](javascript:alert(1))", "author": "x"}
    with Store.open(folder, name=HOSTILE_NAME, config_text="", fingerprint="f") as store:
        for n in range(4):
            players = (evil, plain) if n % 2 == 0 else (plain, evil)
            record = play_random("kamisado", "standard", players, rng)
            side = players.index(evil)
            info = {"depth": 3, "nodes": 10, "text": f"{HTML} ![i](http://evil.example/i.png)"}
            actions = [
                msgspec.structs.replace(a, info=info, ms=5) if a.player == side else a
                for a in record.actions
            ]
            actions.append(ActionRecord(side, f"{HTML}[a](http://evil.example)", 1))
            record = msgspec.structs.replace(
                record,
                actions=actions,
                reason="illegal",
                faulty=side,
                score=0.0 if side == 0 else 1.0,
                detail=f"illegal action '{HTML}[a](http://evil.example)'\n# injected",
                identities=[identity, {"name": "plain", "version": "1"}][:: 1 if side == 0 else -1],
                stderr_tails=[f"```\n{HTML}\n", ""][:: 1 if side == 0 else -1],
            )
            store.add_game(f"g{n}/1", f"g{n}", record)


def rendered(markdown: str) -> str:
    """The Markdown as a CommonMark renderer (with GFM tables) makes it HTML."""
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark").enable("table").render(markdown)


def no_markup_from_the_store(html: str) -> None:
    for tag in ("<img", "<script", "<a ", "<b>"):
        assert tag not in html, (tag, html[html.find(tag) - 200 : html.find(tag) + 200])


def test_a_hostile_store_adds_no_line_or_markup_to_report_md(tmp_path: Path) -> None:
    folder = tmp_path / "hostile"
    hostile_store(folder)
    result = arena("report", str(folder))
    assert result.returncode == 0, result.stderr
    text = (folder / "report.md").read_text()
    lines = text.splitlines()
    assert lines[0].startswith("# cup") and "Fake heading" in lines[0], lines[:3]
    assert lines[1] == ""
    assert not any(line.startswith(("echo owned", "# Fake", "# injected")) for line in lines)
    assert "\x1b" not in text and "\x9b" not in text and "\x07" not in text
    html = rendered(text)
    no_markup_from_the_store(html)
    assert html.count("<h1>") == 1
    assert "&lt;img src=x" in html  # shown, as text
    # the HTML report escapes it as before
    page = (folder / "report.html").read_text()
    assert HTML not in page and "<script>alert(1)" not in page


def test_a_hostile_store_adds_no_markup_to_ratings_md(tmp_path: Path) -> None:
    folder = tmp_path / "hostile"
    hostile_store(folder)
    result = arena("ratings", str(folder), "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    text = (tmp_path / "ratings.md").read_text()
    assert "\x1b" not in text
    html = rendered(text)
    no_markup_from_the_store(html)
    assert "&lt;img src=x" in html
    assert not any(line.startswith("echo owned") for line in text.splitlines())


def on_a_terminal(*args: str) -> bytes:
    """What ``arena ARGS`` writes to a terminal (a pty), stdout and stderr together."""
    import pty
    import select

    main, sub = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", *args],
        stdin=sub,
        stdout=sub,
        stderr=sub,
        env={**os.environ, "COLUMNS": "200", "TERM": "xterm-256color"},
    )
    os.close(sub)
    out = b""
    try:
        while True:
            ready, _, _ = select.select([main], [], [], 120)
            if not ready:
                raise AssertionError(f"no output for 120 s: {out!r}")
            try:
                chunk = os.read(main, 65536)
            except OSError:  # EIO: the other side closed
                break
            if not chunk:
                break
            out += chunk
    finally:
        proc.wait(timeout=60)
        os.close(main)
    return out


def raw_escapes(out: bytes) -> list[bytes]:
    """The sequences a terminal would act on beyond colours and styles (rich's own
    SGR ``ESC [ ... m``): OSC (title, clipboard, hyperlink), C1 CSI, BEL, and the
    lines the stored name would have started."""
    import re

    text = re.sub(rb"\x1b\[[0-9;]*m", b"", out)
    return re.findall(rb"\x1b.{0,8}|\x9b|\xc2\x9b|\x07", text)


def test_a_hostile_name_prints_no_escape_sequence_on_a_terminal(tmp_path: Path) -> None:
    folder = tmp_path / "hostile"
    hostile_store(folder)
    for command in (["report"], ["analyze", "--budget-ms", "1", "--workers", "1"], ["ratings"]):
        out = on_a_terminal(*command, str(folder))
        assert b"cup" in out or command == ["ratings"], out
        assert raw_escapes(out) == [], (command, out)
        assert b"\necho owned" not in out.replace(b"\r", b""), out


# -- 5. no connection a stored file asks for ------------------------------------------


def test_a_stored_ray_address_is_never_connected_to(tmp_path: Path) -> None:
    """The stored tournament file says ``backend = "ray"`` and names a cluster on
    loopback, where this test listens: ``analyze``, ``report`` and ``ratings``
    solve and read here, and nothing ever connects to it."""
    import random
    import socket

    from test_report import play_random

    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    config = (
        f'name = "x"\nbackend = "ray"\nray_address = "127.0.0.1:{port}"\n'
        "ray_connect_timeout = 3\n"
        '[[bots]]\nname = "a"\ncommand = ["builtin:random"]\n'
    )
    folder = tmp_path / "x"
    with Store.open(folder, name="x", config_text=config, fingerprint="f") as store:
        for n in range(2):
            store.add_game(
                f"g{n}", f"p{n}", play_random("kamisado", "standard", ("a", "b"), random.Random(n))
            )
    env_without = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    try:
        result = subprocess.run(
            [sys.executable, "-m", "arena.cli", "analyze", str(folder), "--budget-ms", "1"]
            + ["--workers", "1"],
            capture_output=True,
            text=True,
            timeout=120,
            env=env_without,
        )
        assert result.returncode == 0, result.stderr
        assert " s with 1 worker at 1 ms a position: " in result.stdout, result.stdout
        for command in (["report"], ["ratings"]):
            done = arena(*command, str(folder))
            assert done.returncode == 0, done.stderr
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody knocked
    finally:
        listener.close()


# -- 6. the live server ends with the run, whatever its pages do ----------------------


def test_a_stalled_live_page_does_not_hold_the_run(tmp_path: Path) -> None:
    """Pages that open ``/live/events`` and never read (a tiny receive buffer, so
    the server's sends stall at once): ``arena run --web`` still ends, within the
    server's send timeout of its last game, as the same run with no page does."""
    import re
    import socket
    import time

    from arena.web.server import SEND_TIMEOUT

    toml = tmp_path / "t.toml"
    toml.write_text(
        'name = "stall"\nvariant = "standard"\ntc = "5+0.05"\ngames_per_pairing = 40\n'
        'concurrency = 2\nseed = 3\n[[bots]]\nname = "a"\ncommand = ["builtin:random"]\n'
        '[[bots]]\nname = "b"\ncommand = ["builtin:random", "--seed", "2"]\n'
    )

    def run(name: str, pages: int) -> float:
        start = time.monotonic()
        proc = subprocess.Popen(
            [sys.executable, "-m", "arena.cli", "run", str(toml), "--web", "127.0.0.1:0"]
            + ["-q", "--no-report", "--sandbox", "none", "--results", str(tmp_path / name)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proc.stderr is not None
        line = proc.stderr.readline()
        found = re.search(r"http://(127\.0\.0\.1):(\d+)/", line)
        assert found, line
        stalled = []
        for _ in range(pages):
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
            s.connect((found[1], int(found[2])))
            s.sendall(f"GET /live/events HTTP/1.1\r\nHost: {found[1]}:{found[2]}\r\n\r\n".encode())
            stalled.append(s)
        try:
            proc.wait(timeout=SEND_TIMEOUT + 60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            raise AssertionError(
                f"arena run --web still running with {pages} stalled pages"
            ) from None
        finally:
            for s in stalled:
                s.close()
        assert proc.returncode == 0, proc.stderr.read()
        return time.monotonic() - start

    alone = run("alone", 0)
    stalled = run("stalled", 3)
    assert stalled < alone + SEND_TIMEOUT + 15, (alone, stalled)


def test_the_live_view_streams_to_a_bounded_number_of_pages(played: Path) -> None:
    import httpx
    import trio

    from arena.web.app import Site
    from arena.web.hub import MAX_SUBSCRIBERS, LiveHub, TooManyPages
    from arena.web.server import parse_listen, serve

    hub = LiveHub()
    pages = [hub.subscribe() for _ in range(MAX_SUBSCRIBERS)]
    with pytest.raises(TooManyPages):
        hub.subscribe()
    site = Site({"cup": played.resolve()}, hub=hub, live_name="cup")

    async def main() -> None:
        with trio.fail_after(30):
            async with trio.open_nursery() as nursery:
                url = await nursery.start(serve, site, parse_listen("127.0.0.1:0"))
                async with httpx.AsyncClient(timeout=10) as client:
                    full = await client.get(url + "/live/events")
                    assert full.status_code == 503 and f"{MAX_SUBSCRIBERS} pages" in full.text
                    hub.unsubscribe(pages.pop())
                    async with client.stream("GET", url + "/live/events") as response:
                        assert response.status_code == 200
                nursery.cancel_scope.cancel()

    trio.run(main)


def test_a_skipped_stores_note_prints_no_escape_sequence(played: Path, tmp_path: Path) -> None:
    """``--skip-bad`` names a store it cannot read, quoting what it found there."""
    root = tmp_path / "root"
    shutil.copytree(played, root / "good")
    shutil.copytree(played, root / "bad")
    db = sqlite3.connect(root / "bad" / "games.sqlite")
    db.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (ESCAPES,))
    db.commit()
    db.close()
    out = on_a_terminal("ratings", str(root), "--skip-bad", "--out", str(tmp_path))
    assert b"skipped: " in out, out
    assert raw_escapes(out) == [], out
    assert "\x1b" not in (tmp_path / "ratings.md").read_text()


@pytest.mark.parametrize("name", ["games.sqlite", "analysis.sqlite"])
def test_a_store_reached_through_a_link_is_not_read(
    played: Path, tmp_path: Path, name: str
) -> None:
    """A linked store points where its sender chose (SQLite would make its -wal and
    -shm beside the target): readers refuse it in one line, as writers do."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copy(played / "games.sqlite", elsewhere / name)
    folder = tmp_path / "received"
    folder.mkdir()
    if name != "games.sqlite":
        shutil.copy(played / "games.sqlite", folder / "games.sqlite")
    (folder / name).symlink_to(elsewhere / name)
    commands = [["report"]] + ([["ratings"], ["export"]] if name == "games.sqlite" else [])
    for command in commands:
        one_line_error(arena(*command, str(folder)), name, "symbolic link")
    assert sorted(p.name for p in elsewhere.iterdir()) == [name]


def test_an_analysis_with_a_trigger_is_not_written(received: Path) -> None:
    """``arena analyze`` writes ``analysis.sqlite``: a trigger planted there would
    run with every game it stores."""
    db = sqlite3.connect(received / "analysis.sqlite")
    db.executescript(
        "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
        "INSERT INTO meta VALUES ('schema_version', '1');"
        "CREATE TABLE games (key TEXT PRIMARY KEY, digest TEXT, budget_ms REAL, positions INT,"
        " proven INT, blunders INT, missed INT, nodes INT, seconds REAL, arena_version TEXT,"
        ' analysed_at TEXT, "values" TEXT);'
        "CREATE TRIGGER planted AFTER INSERT ON games BEGIN"
        " INSERT OR REPLACE INTO meta VALUES ('ran', 'yes'); END;"
    )
    db.close()
    result = arena("analyze", str(received), "--budget-ms", "1", "--workers", "1")
    one_line_error(result, "analysis.sqlite", "trigger")
    db = sqlite3.connect(received / "analysis.sqlite")
    assert db.execute("SELECT count(*) FROM meta WHERE key = 'ran'").fetchone() == (0,)
    assert db.execute("SELECT count(*) FROM games").fetchone() == (0,)
    db.close()


def test_sprt_writes_its_file_through_no_link(tmp_path: Path, target: Path) -> None:
    folder = tmp_path / "results" / "duel"
    folder.mkdir(parents=True)
    (folder / "sprt.toml").symlink_to(target)
    result = arena(
        "sprt", "builtin:random", "builtin:greedy", "--name", "duel",
        "--results", str(tmp_path / "results"), "--max-games", "2", "--sandbox", "none",
    )  # fmt: skip
    one_line_error(result, "sprt.toml", "symbolic link")
    assert target.read_text() == TARGET_TEXT


def test_a_store_that_keeps_its_readers_waiting_holds_no_other_page(
    played: Path, tmp_path: Path
) -> None:
    """A served store whose readers wait (here: another process's exclusive lock on
    a store in rollback-journal mode, so each query waits out SQLite's busy
    timeout) takes only its own threads: forty requests for its pages, and the
    other tournament's pages and the list of tournaments still answer at once."""
    import time

    import httpx
    import trio

    from arena.web.app import Site, find_tournaments
    from arena.web.server import parse_listen, serve

    root = tmp_path / "served"
    shutil.copytree(played, root / "good")
    (root / "busy").mkdir()
    shutil.copy(played / "games.sqlite", root / "busy" / "games.sqlite")
    holder = sqlite3.connect(root / "busy" / "games.sqlite", isolation_level=None)
    holder.execute("PRAGMA journal_mode=DELETE")
    holder.execute("BEGIN EXCLUSIVE")
    site = Site(find_tournaments([root]))

    async def main() -> None:
        with trio.fail_after(25):
            async with trio.open_nursery() as nursery:
                url = await nursery.start(serve, site, parse_listen("127.0.0.1:0"))
                async with httpx.AsyncClient(timeout=60) as client, trio.open_nursery() as asking:

                    async def ask(page: str) -> None:
                        await client.get(url + page)

                    for i in range(40):
                        asking.start_soon(ask, ("/t/busy", "/t/busy/games")[i % 2])
                    await trio.sleep(0.5)  # they are all waiting on the store now
                    start = time.monotonic()
                    for page in ("/t/good", "/t/good/games", "/"):
                        assert (await client.get(url + page)).status_code == 200, page
                    assert time.monotonic() - start < 8
                    asking.cancel_scope.cancel()
                holder.execute("ROLLBACK")  # the server's waiting threads end
                nursery.cancel_scope.cancel()

    try:
        trio.run(main)
    finally:
        holder.close()
        site.summaries.close()
