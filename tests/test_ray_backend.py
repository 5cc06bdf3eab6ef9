"""The Ray backend (``arena/raypool.py``) on a local Ray instance with 2 CPUs.

Ray starts once for the module (a few seconds) and is shut down at its end.
The bots are deterministic functions of the position, so a tournament's stored
games do not depend on which process played them, or in what order: the Ray
run must store exactly what the local runner stores.
"""

from __future__ import annotations

import logging
import os
import stat
import sys
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

import trio  # noqa: E402
from click.testing import CliRunner  # noqa: E402
from procs import wait_none_with  # noqa: E402

from arena.config import parse_config  # noqa: E402
from arena.raypool import EXTRA_HINT, RayBackendError, RayPool, RayUnavailableError  # noqa: E402
from arena.record import GameRecord  # noqa: E402
from arena.runner import WorkItem  # noqa: E402
from arena.schedule import build_schedule  # noqa: E402
from arena.store import Store  # noqa: E402
from arena.tournament import Tournament  # noqa: E402

# Picks its action from a stable hash of the position (and a per-bot salt), so
# that the same position always gets the same answer, in any process.
HASH_BOT = f"""#!{sys.executable}
import sys, zlib
from arena.sdk import run
salt = sys.argv[1].encode() if len(sys.argv) > 1 else b""
def choose(request):
    legal = request.legal
    return legal[zlib.crc32(salt + request.position.encode()) % len(legal)]
run(choose, name="hash")
"""


@pytest.fixture(scope="module", autouse=True)
def ray_instance():
    """One local Ray instance for the whole module: starting Ray takes seconds."""
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             logging_level=logging.WARNING)  # fmt: skip
    try:
        yield
    finally:
        ray.shutdown()


def write_tournament(
    folder: Path, *, games: int = 4, bots: int = 3, name: str = "ray-test"
) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    bot = folder / "hash_bot.py"
    bot.write_text(HASH_BOT)
    bot.chmod(bot.stat().st_mode | stat.S_IXUSR)
    tables = "".join(
        f'[[bots]]\nname = "h{i}"\ncommand = ["./hash_bot.py", "salt{i}"]\n' for i in range(bots)
    )
    toml = folder / "t.toml"
    toml.write_text(
        f"""
name = "{name}"
variant = "single"
tc = "60+1"
games_per_pairing = {games}
concurrency = 2
seed = 11
[openings]
plies = 2
{tables}"""
    )
    return toml


def tournament(toml: Path, results: Path, **kwargs: object) -> Tournament:
    text = toml.read_text()
    config = parse_config(text, toml)
    return Tournament(config, text, results_root=results, config_path=toml, **kwargs)


def stored(directory: Path) -> dict[str, tuple[object, ...]]:
    """What must not depend on the backend: key, players, actions, score, reason."""
    with Store.open_existing(directory) as store:
        return {
            key: (tuple(r.players), tuple(a.action for a in r.actions), r.score, r.reason)
            for key, r in store.items()
        }


def test_ray_run_stores_what_the_local_runner_stores(tmp_path: Path) -> None:
    toml = write_tournament(tmp_path / "t")
    local = tournament(toml, tmp_path / "local", workers=1)
    local_outcome = trio.run(local.run)
    local.close()
    on_ray = tournament(toml, tmp_path / "ray", backend="ray")
    ray_outcome = trio.run(on_ray.run)
    on_ray.close()

    assert local_outcome.complete and ray_outcome.complete
    expected = stored(local_outcome.directory)
    assert len(expected) == 12  # 3 pairings x 4 games
    assert stored(ray_outcome.directory) == expected
    assert ray_outcome.progress.done == ray_outcome.progress.played_now == 12
    assert on_ray.pool is not None and not on_ray.pool.actors  # every actor retired
    assert not {r for _, (_, _, _, r) in expected.items() if r in ("crash", "time", "protocol")}
    wait_none_with(str(tmp_path))


def test_a_killed_actor_loses_no_game_and_doubles_none(tmp_path: Path) -> None:
    toml = write_tournament(tmp_path / "t", games=8)
    run = tournament(toml, tmp_path / "results", backend="ray")
    store_game = run._store_game
    killed: list[object] = []

    async def store_then_kill(key: str, pair_key: str, record: GameRecord) -> None:
        await store_game(key, pair_key, record)
        if run.progress.played_now == 3 and not killed:
            assert run.pool is not None
            killed.append(run.pool.actors[0])
            ray.kill(run.pool.actors[0], no_restart=True)  # mid-batch: games are in flight

    run._store_game = store_then_kill  # type: ignore[method-assign]
    outcome = trio.run(run.run)
    run.close()

    assert killed and outcome.complete
    config = parse_config(toml.read_text(), toml)
    scheduled = {key for task in build_schedule(config) for key in task.game_keys}
    assert len(scheduled) == 24
    with Store.open_existing(outcome.directory) as store:
        assert store.finished_keys() == scheduled
        assert store.count() == 24
    assert outcome.progress.done == outcome.progress.played_now == 24
    assert sum(outcome.progress.reasons.values()) == 24
    assert run.pool is not None and sum(run.pool.nodes.values()) >= 3  # a replacement started
    assert run.pool.requeued > 0  # the killed actor had games in flight
    wait_none_with(str(tmp_path))


def test_a_game_played_twice_is_reported_once(tmp_path: Path) -> None:
    toml = write_tournament(tmp_path / "t", games=2, bots=2)
    text = toml.read_text()
    task = build_schedule(parse_config(text, toml))[0]
    seen: list[str] = []

    async def on_record(key: str, pair_key: str, record: GameRecord) -> None:
        seen.append(key)

    pool = RayPool(text, str(toml), processes=2, slots=1, on_record=on_record)
    item = WorkItem(task, [1, 2])
    trio.run(pool.run, [item, item])  # the same pair handed out twice
    assert sorted(seen) == sorted(task.game_keys)
    assert pool.duplicates == 2


def test_a_bot_missing_on_a_node_is_one_line(tmp_path: Path) -> None:
    toml = write_tournament(tmp_path / "t", games=2, bots=2)
    text = toml.read_text()
    config = parse_config(text, toml)

    async def on_record(key: str, pair_key: str, record: GameRecord) -> None:
        raise AssertionError("no game should be played")

    pool = RayPool(text, str(toml), processes=1, on_record=on_record)
    # The driver resolved the bot; now the (only) node does not have it.
    (tmp_path / "t" / "hash_bot.py").unlink()
    items = [WorkItem(task, [1, 2]) for task in build_schedule(config)]
    with pytest.raises(RayBackendError) as info:
        trio.run(pool.run, items)
    message = str(info.value)
    assert "\n" not in message
    assert message.startswith("worker on node ")
    assert f"cannot start bot h0: {tmp_path / 't' / 'hash_bot.py'} not found" in message
    assert not pool.actors


def test_an_unreachable_cluster_is_one_line_at_once(tmp_path: Path) -> None:
    toml = write_tournament(tmp_path / "t", games=2, bots=2)
    text = toml.read_text()

    async def on_record(key: str, pair_key: str, record: GameRecord) -> None:
        raise AssertionError("no game should be played")

    pool = RayPool(text, str(toml), on_record=on_record, address="127.0.0.1:1")
    items = [WorkItem(task, [1, 2]) for task in build_schedule(parse_config(text, toml))]
    start = time.monotonic()
    with pytest.raises(RayBackendError, match=r"^cannot reach the Ray cluster at 127.0.0.1:1: "):
        trio.run(pool.run, items)
    assert time.monotonic() - start < 5


def test_without_ray_the_backend_is_a_one_line_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    toml = write_tournament(tmp_path / "t", games=2, bots=2)
    monkeypatch.setitem(sys.modules, "ray", None)  # "import ray" now fails
    text = toml.read_text()

    async def on_record(key: str, pair_key: str, record: GameRecord) -> None:
        pass

    with pytest.raises(RayUnavailableError, match=r"^the ray backend needs the 'ray' extra: "):
        RayPool(text, str(toml), on_record=on_record)
    with pytest.raises(ValueError) as info:
        tournament(toml, tmp_path / "results", backend="ray")
    assert str(info.value) == EXTRA_HINT
    assert not (tmp_path / "results").exists()  # refused before opening a store

    # The tournament file can ask for Ray too.
    toml.write_text(toml.read_text().replace("seed = 11\n", 'seed = 11\nbackend = "ray"\n'))
    with pytest.raises(RayUnavailableError):
        tournament(toml, tmp_path / "results")


def _cli_has_backend_option() -> bool:
    from arena.cli import run_command

    return any("--backend" in param.opts for param in run_command.params)


@pytest.mark.skipif(not _cli_has_backend_option(), reason="arena run --backend not wired yet")
def test_cli_backend_ray_without_ray_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from arena.cli import main

    toml = write_tournament(tmp_path / "t", games=2, bots=2)
    monkeypatch.setitem(sys.modules, "ray", None)
    result = CliRunner().invoke(
        main, ["run", str(toml), "--backend", "ray", "--results", str(tmp_path / "r"), "-q"]
    )
    assert result.exit_code != 0
    assert result.output.strip().splitlines() == [f"arena: error: {EXTRA_HINT}"]


def test_config_names_the_backend(tmp_path: Path) -> None:
    toml = write_tournament(tmp_path / "t", games=2, bots=2)
    text = toml.read_text().replace(
        "seed = 11\n", 'seed = 11\nbackend = "ray"\nray_address = "head:6379"\n'
    )
    config = parse_config(text, toml)
    assert (config.backend, config.ray_address) == ("ray", "head:6379")
    bad = text.replace('backend = "ray"', 'backend = "cluster"')
    with pytest.raises(ValueError, match=r"backend: invalid enum value 'cluster' \(expected one"):
        parse_config(bad, toml)


# Run in a fresh process: Ray ships a local working directory only when it is
# given to ray.init, and the module's instance is already up without one.
WORKING_DIR_DRIVER = """
import json, sys
from pathlib import Path
import trio
from arena.config import parse_config
from arena.raypool import RayPool
from arena.runner import WorkItem
from arena.schedule import build_schedule

toml = Path(sys.argv[1])
text = toml.read_text()
tails = {}

async def on_record(key, pair_key, record):
    tails[key] = [record.reason, record.stderr_tails]

pool = RayPool(text, str(toml), processes=1, on_record=on_record, working_dir=str(toml.parent))
trio.run(pool.run, [WorkItem(t, [1, 2]) for t in build_schedule(parse_config(text, toml))])
print(json.dumps(tails))
"""


def test_a_shipped_working_dir_runs_the_bots_from_the_nodes_copy(tmp_path: Path) -> None:
    import json
    import subprocess

    project = tmp_path / "project"
    toml = write_tournament(project, games=2, bots=2)
    bot = project / "hash_bot.py"
    # The bot names the file it runs from, on stderr, which the record keeps.
    bot.write_text(bot.read_text().replace(
        "run(choose", "sys.stderr.write(__file__ + '\\n'); sys.stderr.flush()\nrun(choose"
    ))  # fmt: skip
    driver = tmp_path / "driver.py"
    driver.write_text(WORKING_DIR_DRIVER)
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    proc = subprocess.run([sys.executable, str(driver), str(toml)], capture_output=True,
                          text=True, timeout=120, env=env)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    tails = json.loads(proc.stdout.strip().splitlines()[-1])
    assert len(tails) == 2
    assert not {reason for reason, _ in tails.values()} & {"crash", "protocol", "time"}
    # A bot writes its path once, at start: into the tail of the first game it plays.
    ran = {t.strip() for _, stderr_tails in tails.values() for t in stderr_tails if t.strip()}
    assert ran
    for path in ran:
        assert path.endswith("/hash_bot.py") and not path.startswith(str(project)), path
