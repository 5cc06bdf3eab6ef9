"""What the terminal shows: through a pipe (plain, every line ended, one standings
table, full names), with ``--quiet`` (cutechess-style running scores), the live
view's running games, last results and running Elo, ``arena show`` for
Sekigahara, and ``arena export -o -``.

``CliRunner`` gives the command a pipe, not a terminal, as a CI log would.
"""

from __future__ import annotations

import io
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from rich.console import Console

from arena.cli import main
from arena.cli.live import LiveObserver, LogObserver
from arena.games import get_game
from arena.match.events import GameMoved, GameStarted
from arena.match.record import GameRecord
from arena.storage.export import EXPORT_SCHEMA
from arena.storage.store import Store
from arena.tournament import Progress

LONG = "random-with-a-long-name-that-goes-on-and-on-past-eighty-columns"
BOX = re.compile("[\u2500-\u257f]")


@pytest.fixture(scope="module")
def piped_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("piped")
    toml = root / "piped.toml"
    toml.write_text(
        'name = "piped"\nvariant = "single"\ntc = "5+0.05"\ngames_per_pairing = 2\nseed = 1\n'
        "concurrency = 2\n[openings]\nplies = 2\n"
        f'[[bots]]\nname = "{LONG}"\ncommand = "builtin:random"\nargs = ["--seed", "1"]\n'
        '[[bots]]\nname = "greedy"\ncommand = "builtin:greedy"\n'
        '[[bots]]\nname = "random"\ncommand = "builtin:random"\nargs = ["--seed", "2"]\n'
    )
    result = CliRunner().invoke(main, ["run", str(toml), "--results", str(root)])
    assert result.exit_code == 0, result.output
    return root / "piped", result.output


def test_piped_run_prints_plain_ended_lines_and_one_table(piped_run) -> None:
    directory, output = piped_run
    assert output.endswith("\n")
    assert not BOX.search(output), output  # plain text: no box drawing, no live frames
    lines = output.splitlines()
    stored = next(line for line in lines if "games stored in" in line)
    assert stored.startswith("6 of 6 games stored")  # on a line of its own
    headers = [line for line in lines if line.split()[:3] == ["#", "player", "Elo"]]
    assert len(headers) == 1, output  # one standings table, not a points table as well
    assert "faults" in headers[0] and "95%" in headers[0] and "W-L-D" in headers[0]
    rows = lines[lines.index(headers[0]) + 1 : lines.index(headers[0]) + 4]
    assert sorted(row.split()[1] for row in rows) == sorted([LONG, "greedy", "random"])
    for row in rows:
        assert row.split()[-1] == "0"  # faults as a number, as in the reports
    assert any(LONG in line and len(line) > 80 for line in lines)  # never cut at 80


def test_quiet_lines_carry_the_running_score(tmp_path: Path) -> None:
    toml = tmp_path / "duel.toml"
    toml.write_text(
        'name = "duel"\nvariant = "single"\ntc = "5+0.05"\ngames_per_pairing = 4\nseed = 3\n'
        "concurrency = 1\n[openings]\nplies = 2\n"
        '[[bots]]\nname = "greedy"\ncommand = "builtin:greedy"\n'
        '[[bots]]\nname = "random"\ncommand = "builtin:random"\nargs = ["--seed", "2"]\n'
    )
    result = CliRunner().invoke(
        main, ["run", str(toml), "--results", str(tmp_path), "-q", "--no-report"]
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    scores = [line for line in lines if line.startswith("Score of ")]
    assert len(scores) == 4
    with Store.open_existing(tmp_path / "duel") as store:
        records = list(store.records())
    first = records[0].players[0]
    other = records[0].players[1]
    wld = [0, 0, 0]
    for n, (record, line) in enumerate(zip(records, scores, strict=True), start=1):
        mine = record.score if record.players[0] == first else 1 - record.score
        wld[{1.0: 0, 0.0: 1, 0.5: 2}[mine]] += 1
        points = (wld[0] + wld[2] / 2) / n
        assert (
            line
            == f"Score of {first} vs {other}: {wld[0]} - {wld[1]} - {wld[2]}  [{points:.3f}] {n}"
        )
    # each score follows its game's result line
    for i, line in enumerate(lines):
        if line.startswith("Score of "):
            assert lines[i - 1].startswith("[")
    # --no-report still ends with the one standings table
    assert sum(line.split()[:3] == ["#", "player", "Elo"] for line in lines) == 1


def _record(players: list[str], score: float) -> GameRecord:
    state = get_game("kamisado").new_state("single")
    return GameRecord(
        game="kamisado",
        variant="single",
        players=players,
        opening=state.to_text(),
        actions=[],
        score=score,
        reason="home-row",
        final_position=state.to_text(),
    )


def test_live_view_shows_running_games_and_last_results(tmp_path: Path) -> None:
    from arena.plan.config import parse_config

    config = parse_config(
        'name = "live"\n[[bots]]\nname = "a"\ncommand = "builtin:random"\n'
        '[[bots]]\nname = "b"\ncommand = "builtin:random"\n',
        tmp_path / "live.toml",
    )
    out = io.StringIO()
    console = Console(file=out, width=100, force_terminal=False)
    view = LiveObserver(console)
    assert view.wants_events
    progress = Progress(total=4)
    view.started(progress, config, tmp_path)
    opening = get_game("kamisado").new_state("single").to_text()
    for key, players in (("r1:a:b/1", ["a", "b"]), ("r1:a:b/2", ["b", "a"])):
        view.game_event(GameStarted(key, "kamisado", "single", players, opening, ["10+0.1"], 0.0))
    view.game_event(GameMoved("r1:a:b/1", 7, 0, "c1-c5", 12, False, opening, [61_500, 9_250], 0.0))
    frame = Console(file=io.StringIO(), width=100)
    frame.print(view._render())
    text = frame.file.getvalue()  # type: ignore[attr-defined]
    assert "running games" in text
    row = next(line for line in text.splitlines() if "r1:a:b/1" in line)
    assert "a - b" in row and " 7 " in row and "1:01.5 / 0:09.2" in row and "c1-c5" in row
    assert any("r1:a:b/2" in line and "b - a" in line for line in text.splitlines())
    record = _record(["a", "b"], 1.0)
    progress.add(record)
    view.game_finished(progress, "r1:a:b/1", record)
    frame = Console(file=io.StringIO(), width=100)
    frame.print(view._render())
    text = frame.file.getvalue()  # type: ignore[attr-defined]
    assert "last results" in text and "r1:a:b/1 a - b 1-0 home-row" in text
    # the running Elo, from the games finished so far (a won the only one)
    from arena.stats.rating import joint_fit

    fit = joint_fit([("a", "b", 1.0)], players=["a", "b"])
    a = fit.rating("a")
    assert "Elo" in text
    standing = next(line for line in text.splitlines() if " a " in line and "100.0%" in line)
    assert f"{a.value:+.0f} ±{a.error:.0f}" in standing
    assert not any("r1:a:b/1" in line and "c1-c5" in line for line in text.splitlines())
    view.close()
    # Off a terminal the last frame is ended, so the next line starts on its own.
    assert out.getvalue().endswith("\n")


def test_log_observer_lines_are_plain() -> None:
    out = io.StringIO()
    log = LogObserver(Console(file=out, width=40))
    progress = Progress(total=2)
    record = _record(["[bold]x[/bold]", "y:date:"], 0.5)
    progress.add(record)
    log.game_finished(progress, "k1", record)
    lines = out.getvalue().splitlines()
    assert lines == [
        "[1/2] k1 [bold]x[/bold] - y:date: 1/2-1/2 home-row",
        "Score of [bold]x[/bold] vs y:date:: 0 - 0 - 1  [0.500] 1",
    ]


def test_show_sekigahara_prints_text_not_emoji_or_a_dict() -> None:
    result = CliRunner().invoke(main, ["show", "--game", "sekigahara"])
    assert result.exit_code == 0, result.output
    out = result.output
    assert ":date:" in out  # the Date clan's cards, as notation
    assert "\U0001f4c5" not in out and "📆" not in out
    assert "{'" not in out and "'}" not in out
    assert "impact: attacker 0 - defender 0" in out
    assert "your hand:" in out


def test_export_to_stdout_with_schema_tournament_figures_and_identities(
    piped_run, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    directory, _ = piped_run
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["export", str(directory), "-o", "-"])
    assert result.exit_code == 0, result.output
    assert not (tmp_path / "-").exists()
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    with Store.open_existing(directory) as store:
        keys = [key for key, _ in store.items()]
    assert [line["key"] for line in lines] == keys
    for line in lines:
        assert line["schema"] == EXPORT_SCHEMA
        assert line["tournament"] == "piped"
        assert line["pair_key"] and line["players"]
        assert line["figures"] == {}  # single-round matches have no points or rounds to show
        names = [ident["name"] for ident in line["identities"]]
        assert len(names) == 2 and all(names)
    # A file export carries the same lines.
    result = CliRunner().invoke(main, ["export", str(directory), "-o", str(tmp_path / "g.jsonl")])
    assert result.exit_code == 0
    assert [json.loads(x) for x in (tmp_path / "g.jsonl").read_text().splitlines()] == lines


def test_export_takes_a_positional_dash_and_stops_quietly_when_the_reader_does(
    tmp_path: Path,
) -> None:
    """``arena export DIR - | head -1``, as README shows it: one line, no error
    (the export is larger than a pipe's buffer, so the reader leaves before the
    end); and FILE or ``-o FILE`` alike."""
    directory = tmp_path / "many"
    with Store.open(directory, name="many", config_text="", fingerprint="f") as store:
        for n in range(3000):
            store.add_game(f"g{n}", f"p{n}", _record(["a", "b"], 1.0))
    arena = f"{shlex.quote(sys.executable)} -m arena.cli export {shlex.quote(str(directory))}"
    for form in ("-", "-o -"):
        piped = subprocess.run(
            ["bash", "-c", f"set -o pipefail; {arena} {form} | head -1; echo status $?"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert piped.stderr == "", piped.stderr  # not "arena: error: [Errno 32] Broken pipe"
        first, status = piped.stdout.splitlines()
        assert json.loads(first)["key"] == "g0"
        assert status == "status 1"  # ended early, as click ends on a closed pipe
    result = CliRunner().invoke(main, ["export", str(directory), str(tmp_path / "all.jsonl")])
    assert result.exit_code == 0, result.output
    assert len((tmp_path / "all.jsonl").read_text().splitlines()) == 3000
    both = CliRunner().invoke(main, ["export", str(directory), "-", "-o", "x.jsonl"])
    assert both.exit_code == 2 and "two outputs given" in both.output


def _drawn(table: object, width: int) -> str:
    out = io.StringIO()
    Console(file=out, width=width, force_terminal=True, color_system=None).print(table)
    return out.getvalue()


def test_a_narrow_terminal_leaves_out_spare_columns_rather_than_cutting_numbers() -> None:
    from arena.ratinglist.render import HEADERS, SPARE
    from arena.report.terminal import RIGHT, rated_table

    rows = [
        [
            "1",
            "alphabeta 3",
            "1415",
            "±411",
            "12006",
            "6000-0-6",
            "100.0%",
            "86.0%",
            "1",
            "2026-12-03",
        ],
        ["2", "mcts 3", "-122", "±29", "6", "4-2-0", "66.7%", "–", "31", "2026-11-30"],
    ]
    table = rated_table("list", HEADERS, rows, RIGHT | {"tournaments"}, SPARE)
    wide = _drawn(table, 140)
    assert "last played" in wide and "2026-12-03" in wide and "left out" not in wide
    for width in (80, 60):
        text = _drawn(table, width)
        assert all(len(line) <= width for line in text.splitlines()), text
        for line in text.splitlines():  # no number cut to "4…" (a name may be, said below)
            assert "…" not in "".join(line.split("│")[3:]), text
        for cell in ("1415", "±411", "12006", "6000-0-6", "100.0%"):
            assert cell in text, (width, text)
        assert "left out, too narrow here: last played" in " ".join(text.split()), text


def _live_frame(view: LiveObserver, width: int, height: int) -> list[str]:
    """What rich's live display draws of the view on a ``width`` x ``height`` terminal
    (it cuts a taller view to its height, ending it with a line "...")."""
    from rich.live_render import LiveRender

    out = io.StringIO()
    console = Console(file=out, width=width, height=height, force_terminal=True)
    console.print(LiveRender(view._render(), vertical_overflow="ellipsis"))
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", out.getvalue()).splitlines()


@pytest.mark.parametrize("bots", [7, 30])
def test_live_view_fits_an_80_column_terminal(tmp_path: Path, bots: int) -> None:
    """At 80 x 24: every standing on one line (a long name shortened with "…"), the
    standings whole (seven bots) or the best and a count (thirty), never cut by
    rich's "..."; running games and last results take the lines left."""
    from arena.plan.config import parse_config

    names = [LONG, *(f"bot-{n}" for n in range(1, bots))]
    config = parse_config(
        'name = "live"\n'
        + "".join(f'[[bots]]\nname = "{n}"\ncommand = "builtin:random"\n' for n in names),
        tmp_path / "live.toml",
    )
    console = Console(file=io.StringIO(), width=80, height=24, force_terminal=True)
    view = LiveObserver(console)
    progress = Progress(total=100)
    view.started(progress, config, tmp_path)
    view.live.stop()  # type: ignore[union-attr]  # frames are drawn here, not by its thread
    opening = get_game("kamisado").new_state("single").to_text()
    for n in range(8):
        a, b = names[n % bots], names[(n + 1) % bots]
        key = f"r1:{a}:{b}/{n}"
        view.game_event(GameStarted(key, "kamisado", "single", [a, b], opening, ["10+0.1"], 0.0))
    for n in range(2 * bots):
        record = _record([names[n % bots], names[(n + 3) % bots]], float(n % 2))
        progress.add(record)
        view.game_finished(progress, f"done/{n}", record)
    frame = _live_frame(view, 80, 24)
    assert len(frame) <= 24 and all(len(line) <= 80 for line in frame), "\n".join(frame)
    assert "..." not in [line.strip() for line in frame], "\n".join(frame)
    rows = [line for line in frame if re.match(r"│ +\d+ │", line)]
    if bots == 7:
        assert len(rows) == bots, "\n".join(frame)
        assert "running games" in "\n".join(frame) and "last results:" in frame
    else:
        shown = len(rows)
        assert 5 <= shown < bots and any(f"... and {bots - shown} more" in x for x in frame)
    long_row = next(line for line in rows if "random-with" in line) if bots == 7 else None
    assert long_row is None or ("…" in long_row and LONG not in long_row)


def test_run_on_an_80_column_terminal_and_through_a_pipe(tmp_path: Path) -> None:
    """The real ``arena run`` on a pty of 80 x 24, then the same folder's ``arena
    report`` through a pipe: on the terminal no frame is cut with "...", and the
    final table keeps each player on one line, the long name shortened and written
    in full under it; through the pipe, full names, nothing cut."""
    import fcntl
    import os
    import pty
    import struct
    import termios

    bots = [LONG, "greedy", *(f"random-{n}" for n in range(2, 7))]
    toml = tmp_path / "course.toml"
    toml.write_text(
        'name = "course"\nvariant = "single"\ntc = "5+0.05"\ngames_per_pairing = 2\n'
        "concurrency = 2\nseed = 3\n[openings]\nplies = 2\n"
        + "".join(
            f'[[bots]]\nname = "{n}"\ncommand = "builtin:{n if n == "greedy" else "random"}"\n'
            for n in bots
        )
    )
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    process = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "run", str(toml), "--results", str(tmp_path)],
        stdin=slave,
        stdout=slave,
        stderr=slave,
        env={**env, "TERM": "xterm-256color"},
        start_new_session=True,
    )
    os.close(slave)
    raw = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the pty's other end closed
            break
        if not chunk:
            break
        raw += chunk
    os.close(master)
    assert process.wait(timeout=300) == 0, raw.decode(errors="replace")[-2000:]
    text = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", raw.decode("utf-8", "replace"))
    lines = [line for part in text.split("\r\n") for line in part.split("\r")]
    assert "..." not in [line.strip() for line in lines]  # rich's cut of a tall view
    final = lines[next(i for i, x in enumerate(lines) if "games stored in" in x) :]
    rows = [line for line in final if re.match(r"│ +\d+ │", line)]
    assert len(rows) == len(bots), "\n".join(final)  # one line each, none folded
    table = [line for line in final if BOX.match(line) or line.strip().endswith("games")]
    assert all(len(line) <= 80 for line in table), "\n".join(final)
    rank = next(line for line in rows if "random-with" in line).split("│")[1].strip()
    assert "shortened names, in full:" in final and f"  #{rank} {LONG}" in final
    piped = subprocess.run(
        [sys.executable, "-m", "arena.cli", "report", str(tmp_path / "course")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert piped.returncode == 0 and not BOX.search(piped.stdout), piped.stdout
    assert any(LONG in line and len(line) > 80 for line in piped.stdout.splitlines())
    assert "shortened" not in piped.stdout
