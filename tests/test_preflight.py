"""The pre-flight of ``arena run``: every entrant started once, before the first game.

Real processes throughout: an entrant whose script is missing, whose folder its
user cannot read, or whose runtime exits at once must stop the run in one line
each, before any game is stored; ``--skip-broken`` plays the others, and the
broken entrant's games are not played (not lost). A resume checks again.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import needs
import pytest
import trio
from click.testing import CliRunner

from arena.backends.preflight import BrokenEntrants, identity_warnings, preflight
from arena.cli import main
from arena.match.record import FAULT_REASONS
from arena.plan.config import parse_config
from arena.storage.store import Store
from arena.tournament import Tournament

GOOD = (
    '[[bots]]\nname = "a"\ncommand = "builtin:random"\nargs = ["--seed", "1"]\n'
    '[[bots]]\nname = "b"\ncommand = "builtin:random"\nargs = ["--seed", "2"]\n'
)
HEADER = 'name = "pf"\nvariant = "single"\ntc = "5+0.1"\ngames_per_pairing = 2\nseed = 3\n'

BOT = """
import sys
from arena.sdk import run
run(lambda request: request.legal[0], name=sys.argv[1] if len(sys.argv) > 1 else "first")
"""


def broken_entry(tmp_path: Path, case: str) -> tuple[str, str]:
    """A ``[[bots]]`` table named ``c`` that cannot start, and what its line must say."""
    if case == "missing script":
        return (
            f'[[bots]]\nname = "c"\ncommand = ["{sys.executable}", "gone.py"]\ncwd = "."\n',
            "gone.py",
        )
    if case == "unreadable folder":
        needs.sandbox()  # the arena's own user reads it; the bot's user must not
        folder = tmp_path / "private"
        folder.mkdir()
        (folder / "bot.py").write_text(BOT)
        folder.chmod(0o700 if os.geteuid() == 0 else 0o000)
        return (
            f'[[bots]]\nname = "c"\ncommand = ["{sys.executable}", "bot.py"]\ncwd = "private"\n',
            "not readable",
        )
    assert case == "runtime exits at once"
    return (
        '[[bots]]\nname = "c"\ncommand = ["/bin/sh", "-c", '
        "\"echo 'Error: could not create the runtime' >&2; exit 1\"]\n",
        "exited with code 1; it wrote: Error: could not create the runtime",
    )


CASES = ["missing script", "unreadable folder", "runtime exits at once"]


def run(toml: Path, results: Path, *extra: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(
        main, ["run", str(toml), "--results", str(results), "-q", "--no-report", *extra]
    )
    return result.exit_code, result.stdout, result.stderr


def stored(directory: Path) -> list[tuple[str, ...]]:
    if not (directory / "games.sqlite").exists():
        return []
    with Store.open_existing(directory) as store:
        return [tuple(r.players) for r in store.records()]


@pytest.mark.parametrize("workers", ["1", "2"])
@pytest.mark.parametrize("case", CASES)
def test_an_entrant_that_cannot_start_stops_the_run_in_one_line(
    tmp_path: Path, case: str, workers: str
) -> None:
    entry, words = broken_entry(tmp_path, case)
    toml = tmp_path / "t.toml"
    toml.write_text(HEADER + GOOD + entry)
    code, out, err = run(toml, tmp_path / "r", "--workers", workers)
    assert code != 0
    lines = err.strip().splitlines()
    assert len(lines) == 2, err  # the entrant's line, then the run's
    assert lines[0].startswith("arena: c: did not start: "), lines[0]
    assert words in lines[0], lines[0]
    assert lines[1].startswith("arena: error: 1 entrant cannot start (c)"), lines[1]
    assert "--skip-broken" in lines[1] and "Traceback" not in err
    assert stored(tmp_path / "r" / "pf") == []


@pytest.mark.parametrize("workers", ["1", "2"])
@pytest.mark.parametrize("case", CASES)
def test_skip_broken_plays_the_others_and_stores_no_loss(
    tmp_path: Path, case: str, workers: str
) -> None:
    entry, words = broken_entry(tmp_path, case)
    toml = tmp_path / "t.toml"
    toml.write_text(HEADER + GOOD + entry)
    code, out, err = run(toml, tmp_path / "r", "--workers", workers, "--skip-broken")
    assert code == 0, err
    assert "not playing c: did not start: " in out and words in out, out
    # a-b twice; a-c and b-c (four games) not played, and not stored as losses.
    assert "2 of 6 games stored" in out and "(4 not played: did not start: c)" in out, out
    games = stored(tmp_path / "r" / "pf")
    assert sorted(games) == [("a", "b"), ("b", "a")]


def test_a_resume_checks_every_entrant_again(tmp_path: Path) -> None:
    folder = tmp_path / "club"
    folder.mkdir()
    script = folder / "bot.py"
    script.write_text(BOT)
    text = (
        HEADER.replace("games_per_pairing = 2", "games_per_pairing = 4")
        + "concurrency = 1\n"
        + GOOD
        + f'[[bots]]\nname = "c"\ncommand = ["{sys.executable}", "bot.py", "c"]\ncwd = "club"\n'
    )
    toml = tmp_path / "t.toml"
    toml.write_text(text)
    # A first run, stopped after two games: c started then.
    first = Tournament(
        parse_config(text, toml),
        text,
        results_root=tmp_path / "r",
        config_path=toml,
        workers=1,
        stop_when=lambda key, pair, record: True,
    )
    trio.run(first.run)
    first.close()
    before = stored(tmp_path / "r" / "pf")
    assert len(before) == 1
    script.unlink()  # now c cannot start
    code, out, err = run(toml, tmp_path / "r")
    assert code != 0 and "arena: c: did not start: " in err, err
    assert stored(tmp_path / "r" / "pf") == before  # nothing more stored
    code, out, err = run(toml, tmp_path / "r", "--skip-broken")
    assert code == 0, err
    games = stored(tmp_path / "r" / "pf")
    with_c = sum("c" in g for g in before)
    assert games[: len(before)] == before
    assert sorted(games[len(before) :] + [g for g in before if "c" not in g]) == sorted(
        [("a", "b"), ("b", "a")] * 2
    )
    assert f"({8 - with_c} not played: did not start: c)" in out, out


def test_the_pre_flight_starts_the_entrants_at_once(tmp_path: Path) -> None:
    """Two bots that each answer ``hello`` only once the other has started too
    (``bad_bot.py meet``) pass the pre-flight only if it starts them together."""
    state = tmp_path / "state"
    for name in ("x", "y"):
        (state / name).mkdir(parents=True)
    state.chmod(0o777)
    bad = Path(__file__).parent / "bad_bot.py"
    tables = "".join(
        f'[[bots]]\nname = "{name}"\ncommand = ["{sys.executable}", "{bad}", "meet", "5",'
        f' "--state", "{state / name}"]\nsandbox_rw = ["{state}"]\n'
        for name in ("x", "y")
    )
    for name in ("x", "y"):
        (state / name).chmod(0o777)
    toml = tmp_path / "t.toml"
    toml.write_text(HEADER + tables)
    config = parse_config(toml.read_text(), toml)
    result = trio.run(preflight, config, "kamisado")
    assert not result.broken, [s.line() for s in result.broken]


def test_different_programs_with_one_identity_name_are_warned_of(tmp_path: Path) -> None:
    for student in ("ann", "bob"):
        (tmp_path / student).mkdir()
        (tmp_path / student / "bot.py").write_text(BOT)
    tables = "".join(
        f'[[bots]]\nname = "{s}"\ncommand = ["{sys.executable}", "bot.py", "mybot"]\ncwd = "{s}"\n'
        for s in ("ann", "bob")
    )
    # One program twice, two seeds: one identity is right, no warning.
    tables += (
        '[[bots]]\nname = "r1"\ncommand = "builtin:random"\nargs = ["--seed", "1"]\n'
        '[[bots]]\nname = "r2"\ncommand = "builtin:random"\nargs = ["--seed", "2"]\n'
    )
    toml = tmp_path / "t.toml"
    toml.write_text(HEADER + tables)
    config = parse_config(toml.read_text(), toml)
    result = trio.run(preflight, config, "kamisado")
    assert not result.broken, [s.line() for s in result.broken]
    assert len(result.warnings) == 1, result.warnings
    assert "ann, bob" in result.warnings[0] and "'mybot'" in result.warnings[0]
    assert identity_warnings(config, result.started[2:]) == []
    code, out, err = run(toml, tmp_path / "r")
    assert code == 0, err
    assert out.count("warning: entries ann, bob are different programs") == 1, out
    with Store.open_existing(tmp_path / "r" / "pf") as store:
        assert all(r.reason not in FAULT_REASONS for r in store.records())


def test_a_stopped_run_leaves_no_worker_behind(tmp_path: Path) -> None:
    """Workers forked before the pre-flight end with the run it stops."""
    entry, _ = broken_entry(tmp_path, "runtime exits at once")
    toml = tmp_path / "t.toml"
    toml.write_text(HEADER + GOOD + entry)
    text = toml.read_text()
    run = Tournament(
        parse_config(text, toml), text, results_root=tmp_path / "r", config_path=toml, workers=2
    )
    run.fork_workers()
    forked = [p.pid for p in run._forked]
    assert len(forked) == 2
    with pytest.raises(BrokenEntrants):
        trio.run(run.run)
    run.close()
    assert run._forked == []
    for pid in forked:  # reaped: gone from the process table
        assert not Path(f"/proc/{pid}").exists(), pid


def test_a_jvm_that_cannot_start_is_one_line_with_its_reasons(tmp_path: Path) -> None:
    """A real JVM refused its heap: it says why on stdout, and the line shows both of
    its lines as text (it used to be one b'...' repr of the first)."""
    java = needs.tool("java", what="a JDK (openjdk-17-jdk-headless)")
    toml = tmp_path / "t.toml"
    toml.write_text(
        HEADER + GOOD + f'[[bots]]\nname = "c"\ncommand = ["{java}", "-Xms100000g", "-version"]\n'
    )
    code, out, err = run(toml, tmp_path / "r")
    assert code != 0
    line = err.splitlines()[0]
    assert line.startswith("arena: c: did not start: ") and "b'" not in line, line
    assert "[stdout] Error occurred during initialization of VM | [stdout] Could not" in line
    assert stored(tmp_path / "r" / "pf") == []


def test_a_swiss_with_skip_broken_never_pairs_the_entrant_that_did_not_start(
    tmp_path: Path,
) -> None:
    """The draw of a Swiss is made before the pre-flight; an entrant that then cannot
    start is withdrawn from round 1 on, as a disqualified one: no round pairs it (its
    opponents would lose their pairing to a no-show), and the others play every round."""
    entry, _ = broken_entry(tmp_path, "runtime exits at once")
    others = "".join(
        f'[[bots]]\nname = "{n}"\ncommand = "builtin:random"\nargs = ["--seed", "{i}"]\n'
        for i, n in enumerate("abd", 1)
    )
    toml = tmp_path / "t.toml"
    toml.write_text(HEADER + 'format = "swiss"\nrounds = 3\n' + others + entry)
    code, out, err = run(toml, tmp_path / "r", "--skip-broken")
    assert code == 0, err
    games = stored(tmp_path / "r" / "pf")
    assert games and not any("c" in g for g in games), games
    # Three entrants left: each round pairs two, the third has the bye; three rounds.
    assert len(games) == 3 * 2, games
    assert "not played" not in out, out  # nothing of c's was ever drawn to be skipped
