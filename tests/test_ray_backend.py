"""The Ray backend (``arena/backends/raypool.py``) on a real three-node Ray cluster.

One ``ray.cluster_utils.Cluster`` for the whole module: a head and two worker
nodes on 127.0.0.1, one CPU each, started once (Ray start-up takes seconds).
Tests that remove a worker node add a fresh one afterwards. Ray's health check
is tightened so that a killed node is declared dead within a few seconds
(the default takes about 15).

The bots are deterministic functions of the position, so a tournament's stored
games do not depend on which process or node played them, or in what order: a
Ray run must store exactly what the local runner stores, also when nodes die.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import needs
import pytest

ray = needs.module("ray", "install the 'ray' extra: pip install -e '.[ray]'", module_level=True)

import trio  # noqa: E402
from click.testing import CliRunner  # noqa: E402
from procs import processes, wait_none_with  # noqa: E402

from arena.backends.pool import WorkItem  # noqa: E402
from arena.backends.rayconnect import (  # noqa: E402
    EXTRA_HINT,
    RayBackendError,
    RayUnavailableError,
    init_ray,
)
from arena.backends.raypool import RayPool  # noqa: E402
from arena.engine.sandbox import resolve as resolve_sandbox  # noqa: E402
from arena.match.record import GameRecord  # noqa: E402
from arena.plan.config import parse_config  # noqa: E402
from arena.plan.schedule import build_schedule  # noqa: E402
from arena.storage.store import Store  # noqa: E402
from arena.tournament import Tournament  # noqa: E402

LOOPBACK = "127.0.0.1"
SANDBOX = resolve_sandbox("auto", warn=lambda line: None)
"""What a tournament's default sandbox becomes here (and so on every node)."""
HEALTH_CHECK = {
    "health_check_initial_delay_ms": 0,
    "health_check_period_ms": 1000,
    "health_check_timeout_ms": 1000,
    "health_check_failure_threshold": 3,
    # The machine is shared: another program's memory must not make Ray kill ours.
    "memory_monitor_refresh_ms": 0,
}

# Picks its action from a stable hash of the position (and a per-bot salt), so
# that the same position always gets the same answer, in any process. Given a
# gate folder, it answers only while GATE/open exists, and shows that it waits
# with a file GATE/waiting-ID (a random ID: in the sandbox every bot's pid is 2):
# a test can hold every game in mid-play.
HASH_BOT = f"""#!{sys.executable}
import os, sys, time, zlib
from arena.sdk import run
salt = sys.argv[1].encode() if len(sys.argv) > 1 else b""
gate = sys.argv[2] if len(sys.argv) > 2 else None
def wait_for_the_gate():
    mark = os.path.join(gate, "waiting-" + os.urandom(8).hex())
    while not os.path.exists(os.path.join(gate, "open")):
        if not os.path.exists(mark):
            open(mark, "w").close()
        time.sleep(0.01)
    if os.path.exists(mark):
        os.unlink(mark)
def choose(request):
    if gate is not None:
        wait_for_the_gate()
    legal = request.legal
    return legal[zlib.crc32(salt + request.position.encode()) % len(legal)]
run(choose, name="hash")
"""


@pytest.fixture(scope="module", autouse=True)
def cluster() -> Iterator[Any]:
    """A head and two worker nodes on loopback, this process joined as a driver."""
    from ray.cluster_utils import Cluster

    cluster = Cluster(
        initialize_head=True,
        head_node_args={
            "num_cpus": 1,
            "node_ip_address": LOOPBACK,
            "include_dashboard": False,
            "_system_config": HEALTH_CHECK,
        },
    )
    try:
        for _ in range(2):
            cluster.add_node(num_cpus=1, node_ip_address=LOOPBACK)
        cluster.wait_for_nodes()
        init_ray(ray, cluster.address, log_to_driver=False, logging_level=logging.WARNING)
        yield cluster
    finally:
        ray.shutdown()
        cluster.shutdown()


def restore(cluster: Any) -> None:
    """Back to two live worker nodes (and Ray knowing the removed one is dead)."""
    while len(cluster.worker_nodes) < 2:
        cluster.add_node(num_cpus=1, node_ip_address=LOOPBACK)
    cluster.wait_for_nodes()


def live_cpus() -> int:
    return sum(int(n["Resources"].get("CPU", 0)) for n in ray.nodes() if n["Alive"])


def write_tournament(
    folder: Path,
    *,
    games: int = 4,
    bots: int = 3,
    name: str = "ray-test",
    concurrency: int | None = 2,
    bot_path: str = "hash_bot.py",
    extra_bots: str = "",
    gate: Path | None = None,
) -> Path:
    """A round robin of hash bots; with ``gate``, an open gate folder they wait at
    (world-writable and granted: bots run as nobody under a root arena)."""
    folder.mkdir(parents=True, exist_ok=True)
    bot = folder / bot_path
    bot.parent.mkdir(parents=True, exist_ok=True)
    bot.write_text(HASH_BOT)
    bot.chmod(0o755)  # bots run as nobody under a root arena: readable and executable by all
    extra_args, grant = "", ""
    if gate is not None:
        gate.mkdir(parents=True)
        gate.chmod(0o777)
        (gate / "open").touch()
        extra_args, grant = f', "{gate}"', f'sandbox_rw = ["{gate}"]\n'
    tables = "".join(
        f'[[bots]]\nname = "h{i}"\ncommand = ["./{bot_path}", "salt{i}"{extra_args}]\n{grant}'
        for i in range(bots)
    )
    setting = f"concurrency = {concurrency}" if concurrency is not None else ""
    toml = folder / "t.toml"
    toml.write_text(
        f"""
name = "{name}"
variant = "single"
tc = "60+1"
games_per_pairing = {games}
{setting}
seed = 11
[openings]
plies = 2
{tables}{extra_bots}"""
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
    toml = write_tournament(tmp_path / "t", concurrency=None)
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
    # No concurrency in the file: one game slot per cluster CPU, one actor on each node.
    assert on_ray.pool.planned == 3 and sorted(on_ray.pool.nodes.values()) == [1, 1, 1]
    assert on_ray.pool.summary().endswith(
        f"nodes lost: 0; actors lost: 0; games re-queued: 0; sandbox: {SANDBOX}, "
        "checked on each node"
    )
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
# given to ray.init, and this module's driver is connected already without one.
WORKING_DIR_DRIVER = """
import json, sys
from pathlib import Path
import trio
from arena.plan.config import parse_config
from arena.backends.raypool import RayPool
from arena.backends.pool import WorkItem
from arena.plan.schedule import build_schedule

toml, address = Path(sys.argv[1]), sys.argv[2]
text = toml.read_text()
tails = {}

async def on_record(key, pair_key, record):
    tails[key] = [record.reason, record.stderr_tails]

pool = RayPool(text, str(toml), on_record=on_record, working_dir=str(toml.parent),
               address=address)
trio.run(pool.run, [WorkItem(t, [1, 2]) for t in build_schedule(parse_config(text, toml))])
print(json.dumps({"tails": tails, "nodes": len(pool.nodes)}))
"""


def test_a_shipped_working_dir_runs_the_bots_from_the_nodes_copy(
    tmp_path: Path, cluster: Any
) -> None:
    """The README's layout: the bots in a ``bots/`` folder of the shipped folder,
    next to a built-in bot, which must still come from the installed package."""
    project = tmp_path / "project"
    random_bot = '[[bots]]\nname = "r"\ncommand = ["builtin:random", "--seed", "3"]\n'
    toml = write_tournament(
        project, games=2, bots=2, bot_path="bots/hash_bot.py", extra_bots=random_bot
    )
    bot = project / "bots" / "hash_bot.py"
    # The bot names the file it runs from, on stderr, which the record keeps.
    bot.write_text(
        bot.read_text().replace(
            "run(choose", "sys.stderr.write(__file__ + '\\n'); sys.stderr.flush()\nrun(choose"
        )
    )
    driver = tmp_path / "driver.py"
    driver.write_text(WORKING_DIR_DRIVER)
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    proc = subprocess.run(
        [sys.executable, str(driver), str(toml), cluster.address],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    tails = out["tails"]
    assert len(tails) == 6 and out["nodes"] == 2  # 3 pairings x 2 games, concurrency 2
    assert not {reason for reason, _ in tails.values()} & {"crash", "protocol", "time"}
    # A bot writes its path once, at start: into the tail of the first game it plays.
    ran = {t.strip() for _, stderr_tails in tails.values() for t in stderr_tails if t.strip()}
    assert ran
    for path in ran:
        assert path.endswith("/bots/hash_bot.py") and not path.startswith(str(project)), path


def test_a_node_where_bwrap_fails_is_one_line(tmp_path: Path) -> None:
    """The driver chose bwrap; a node without a working bwrap must not play unconfined."""
    needs.sandbox()  # else the driver chooses no sandbox, and no node is asked for one
    from arena.backends.rayactor import GameActor

    class NoBwrapActor(GameActor):  # defined here: Ray ships it by value
        def check(self) -> str:
            from arena.engine import sandbox

            os.environ["PATH"] = "/nonexistent"
            sandbox.bwrap_path.cache_clear()
            sandbox.probe.cache_clear()
            return super().check()

    toml = write_tournament(tmp_path / "t", games=2, bots=2)
    run = tournament(toml, tmp_path / "results", backend="ray", workers=1)
    real_pool = RayPool

    def pool_without_bwrap(*args: Any, **kwargs: Any) -> RayPool:
        pool = real_pool(*args, **kwargs)
        pool._actor_class = ray.remote(NoBwrapActor)
        return pool

    import arena.backends.raypool

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(arena.backends.raypool, "RayPool", pool_without_bwrap)
        with pytest.raises(RayBackendError) as info:
            trio.run(run.run)
    run.close()
    message = str(info.value)
    assert "\n" not in message and run.progress.played_now == 0
    assert re.match(
        r"worker on node 127\.0\.0\.1 \[[0-9a-f]{8}\] cannot sandbox bots: bwrap is "
        r"not installed; install it with: .* on that node, or run with --sandbox none$",
        message,
    ), message


# ------------------------------------------------------------------ nodes lost


def scheduled(toml: Path) -> set[str]:
    config = parse_config(toml.read_text(), toml)
    return {key for task in build_schedule(config) for key in task.game_keys}


def assert_every_game_once(toml: Path, outcome: Any) -> None:
    keys = scheduled(toml)
    with Store.open_existing(outcome.directory) as store:
        assert store.finished_keys() == keys
        assert store.count() == len(keys)
    assert outcome.complete
    assert outcome.progress.done == outcome.progress.played_now == len(keys)


def descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (children, their children...)."""
    children: dict[int, list[int]] = {}
    for child, state, parent, _, _ in processes():
        if state != "Z":
            children.setdefault(parent, []).append(child)
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def kill_node_processes(node: Any) -> None:
    """SIGKILL a node's raylet and every process under it at once, as a machine's loss does.

    ``Cluster.remove_node`` kills only the raylet and its helpers: the actor's
    worker process (and its bots) goes on serving the driver until it notices,
    which can be long enough to finish every game it was given. Everything is
    stopped first (SIGSTOP, until no new process appears), so that nothing plays
    or forks between the kills.
    """
    raylet = node.all_processes["raylet"][0].process.pid
    stopped: set[int] = set()
    todo = {raylet}
    while todo:
        for pid in todo:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGSTOP)
        stopped |= todo
        todo = descendants(raylet) - stopped
    for pid in stopped:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def remove_a_worker(cluster: Any, pool: RayPool, node_id: str | None = None) -> str:
    """Kill a worker node (``node_id``, else one hosting an actor now, else one whose
    actor already retired: near the end of a run none may be left), every process
    of it at once; its label."""
    workers = {node.node_id: node for node in cluster.worker_nodes}
    if node_id is None:
        played = [n for n in pool.cluster.values() if n.id in workers and n.label in pool.nodes]
        node_id = max(played, key=lambda n: n.actors > 0).id
    kill_node_processes(workers[node_id])
    cluster.remove_node(workers[node_id], allow_graceful=False)  # reaps, and forgets the node
    return pool.cluster[node_id].label


def run_losing_a_node(
    tmp_path: Path, cluster: Any, when: Callable[[int, int], bool]
) -> tuple[Path, Any, RayPool, list[str]]:
    """A 24-game round robin on three actors; a worker node is killed after a
    stored game when ``when(played, total)``."""
    toml = write_tournament(tmp_path / "t", games=8, concurrency=None)
    run = tournament(toml, tmp_path / "results", backend="ray")
    store_game = run._store_game
    removed: list[str] = []

    async def store_then_kill(key: str, pair_key: str, record: GameRecord) -> None:
        await store_game(key, pair_key, record)
        if not removed and when(run.progress.played_now, run.progress.total):
            assert run.pool is not None
            removed.append(remove_a_worker(cluster, run.pool))

    run._store_game = store_then_kill  # type: ignore[method-assign]
    try:
        outcome = trio.run(run.run)
    finally:
        run.close()
        restore(cluster)
    assert isinstance(run.pool, RayPool)
    return toml, outcome, run.pool, removed


def test_a_node_lost_at_start_up_costs_no_game(
    tmp_path: Path, cluster: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The node dies while its actor is being checked: the run goes on without it."""
    toml = write_tournament(tmp_path / "t", games=8, concurrency=None)
    removed: list[str] = []
    check = RayPool._check

    async def kill_then_check(pool: RayPool, actor: Any, node: Any) -> None:
        if not removed and node.id in {n.node_id for n in cluster.worker_nodes}:
            removed.append(remove_a_worker(cluster, pool, node.id))
        await check(pool, actor, node)

    monkeypatch.setattr(RayPool, "_check", kill_then_check)
    run = tournament(toml, tmp_path / "results", backend="ray")
    try:
        outcome = trio.run(run.run)
    finally:
        run.close()
        restore(cluster)
    pool = run.pool
    assert isinstance(pool, RayPool) and removed
    assert_every_game_once(toml, outcome)
    assert [node.label for node in pool.nodes_lost] == removed
    assert removed[0] not in pool.nodes  # no actor ever checked there
    # Its actor was lost before it had any work: nothing to re-queue.
    assert (pool.actors_lost, pool.requeued) == (1, 0)
    assert pool.summary().endswith(
        f"nodes lost: 1 ({removed[0]}); actors lost: 1; games re-queued: 0; sandbox: {SANDBOX}, "
        "checked on each node"
    )
    wait_none_with(str(tmp_path))


def test_a_node_lost_mid_run_loses_no_game_and_doubles_none(tmp_path: Path, cluster: Any) -> None:
    """A worker node dies while its actor is in mid-game: what it held is played
    elsewhere, every game is stored once, and no record arrives twice.

    Once a third of the games are stored the bots' gate closes, so every game
    waits at its next move; with all three actors (one game slot each) waiting,
    the node of one of them is killed, every process at once, and the gate opens
    again. The killed actor therefore always holds an unfinished game; a kill at
    an arbitrary moment could land after its instant games had all ended.
    """
    gate = tmp_path / "gate"
    toml = write_tournament(tmp_path / "t", games=8, concurrency=None, gate=gate)
    run = tournament(toml, tmp_path / "results", backend="ray")
    store_game = run._store_game
    removed: list[str] = []
    problems: list[str] = []

    def kill_while_every_game_waits() -> None:
        """In a thread: the driver goes on meanwhile (its games must reach the gate)."""
        try:
            deadline = time.monotonic() + 60
            while len(list(gate.glob("waiting-*"))) < 3:
                if time.monotonic() > deadline:
                    problems.append(f"waiting bots: {sorted(gate.glob('waiting-*'))}")
                    return
                time.sleep(0.01)
            assert run.pool is not None and run.pool._slots_each == 1
            removed.append(remove_a_worker(cluster, run.pool))
        except Exception as exc:  # noqa: BLE001 - reported by the test below
            problems.append(repr(exc))
        finally:
            (gate / "open").touch()

    killer = threading.Thread(target=kill_while_every_game_waits)

    async def store_then_close_the_gate(key: str, pair_key: str, record: GameRecord) -> None:
        await store_game(key, pair_key, record)
        if run.progress.played_now == run.progress.total // 3 and not killer.is_alive():
            (gate / "open").unlink()
            killer.start()

    run._store_game = store_then_close_the_gate  # type: ignore[method-assign]
    try:
        outcome = trio.run(run.run)
    finally:
        killer.join(70)
        run.close()
        restore(cluster)
    pool = run.pool
    assert isinstance(pool, RayPool)
    assert not problems and removed, problems
    assert_every_game_once(toml, outcome)
    assert pool.duplicates == 0  # no game's record came back twice
    assert [node.label for node in pool.nodes_lost] == removed
    assert pool.actors_lost == 1
    # What the lost actor held: its two batches of pair tasks, two games each.
    assert 0 < pool.requeued <= 2 * 2 * pool._slots_each
    # No replacement went to the dead node (every other CPU was busy: none at all).
    assert pool.nodes[removed[0]] == 1
    wait_none_with(str(tmp_path))


def test_a_node_lost_near_the_end_loses_no_game(tmp_path: Path, cluster: Any) -> None:
    toml, outcome, pool, removed = run_losing_a_node(
        tmp_path, cluster, lambda played, total: played == total - 3
    )
    assert removed
    assert_every_game_once(toml, outcome)
    assert [node.label for node in pool.nodes_lost] == removed, (pool.summary(), pool.cluster)
    # Its actor may have finished its last games and retired just before.
    assert pool.actors_lost <= 1 and pool.nodes[removed[0]] == 1
    wait_none_with(str(tmp_path))


def test_a_game_that_keeps_losing_its_actor_ends_the_run_in_one_line(tmp_path: Path) -> None:
    """Actors that die in every game: each game is retried a bounded number of times."""
    from arena.backends.rayactor import GameActor
    from arena.backends.raypool import MAX_GAME_LOSSES

    class DyingActor(GameActor):  # defined here: Ray ships it by value
        def play(self, batch: bytes, verdict: bytes | None = None) -> Iterator[bytes]:
            os._exit(1)
            yield b""  # a generator, like the real one

    toml = write_tournament(tmp_path / "t", games=2, bots=2)
    text = toml.read_text()
    played: list[str] = []

    async def on_record(key: str, pair_key: str, record: GameRecord) -> None:
        played.append(key)

    pool = RayPool(text, str(toml), processes=1, on_record=on_record)
    pool._actor_class = ray.remote(DyingActor)
    items = [WorkItem(task, [1, 2]) for task in build_schedule(parse_config(text, toml))]
    with pytest.raises(RayBackendError) as info:
        trio.run(pool.run, items)
    message = str(info.value)
    assert "\n" not in message and not played
    assert re.match(
        rf"game \S+/[12] was lost with its actor {MAX_GAME_LOSSES} times \(last on "
        r"node 127\.0\.0\.1 \[[0-9a-f]{8}\]: ",
        message,
    ), message
    assert pool.actors_lost == MAX_GAME_LOSSES and not pool.actors
    assert not pool.nodes_lost  # the nodes are fine: only the actors died


# ------------------------------------------------------------------ addresses


def run_pool(toml: Path, address: str, **kwargs: Any) -> RayPool:
    text = toml.read_text()

    async def on_record(key: str, pair_key: str, record: GameRecord) -> None:
        raise AssertionError("no game should be played")

    pool = RayPool(text, str(toml), on_record=on_record, address=address, **kwargs)
    items = [WorkItem(task, [1, 2]) for task in build_schedule(parse_config(text, toml))]
    trio.run(pool.run, items)
    return pool


@pytest.mark.parametrize("address", ["foo:bar", "head", "head:0", ":6379", "head:6379:1"])
def test_a_malformed_address_is_one_line_without_hints(tmp_path: Path, address: str) -> None:
    toml = write_tournament(tmp_path / "t", games=2, bots=2)
    start = time.monotonic()
    with pytest.raises(RayBackendError) as info:
        run_pool(toml, address)
    assert time.monotonic() - start < 10
    message = str(info.value)
    assert message.startswith(f"bad Ray cluster address {address!r}: expected HOST:PORT")
    assert "\n" not in message and "token" not in message


def test_a_listener_that_is_not_ray_is_one_line_within_seconds(tmp_path: Path) -> None:
    toml = write_tournament(tmp_path / "t", games=2, bots=2)
    listener = socket.create_server((LOOPBACK, 0))
    held: list[socket.socket] = []

    def accept() -> None:  # accepts and says nothing, as a stuck server would
        with contextlib.suppress(OSError):
            while True:
                held.append(listener.accept()[0])

    threading.Thread(target=accept, daemon=True).start()
    address = f"{LOOPBACK}:{listener.getsockname()[1]}"
    start = time.monotonic()
    try:
        with pytest.raises(RayBackendError) as info:
            run_pool(toml, address, connect_timeout=2)
    finally:
        listener.close()
        for conn in held:
            conn.close()
    assert time.monotonic() - start < 10
    message = str(info.value)
    assert message.startswith(f"{address} answers but is not a Ray cluster")
    assert "\n" not in message and "token" not in message


def test_cli_joins_a_loopback_cluster_as_given(tmp_path: Path, cluster: Any) -> None:
    """``--address 127.0.0.1:PORT`` of a cluster bound to loopback: it joins (Ray alone
    would swap in the host's external address and retry for minutes), plays as many
    games at once as the cluster has CPUs, analyses them there (``--analyze``), and
    keeps Ray's lines out of the output."""
    assert cluster.address.startswith(f"{LOOPBACK}:")
    toml = write_tournament(tmp_path / "t", games=2, concurrency=None, name="loopback")
    arena = Path(sys.executable).with_name("arena")
    env = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    start = time.monotonic()
    proc = subprocess.run(
        [
            str(arena),
            "run",
            str(toml),
            "--backend",
            "ray",
            "--address",
            cluster.address,
            "--results",
            str(tmp_path / "results"),
            "-q",
            "--no-report",
            "--analyze",
            "--budget-ms",
            "5",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert time.monotonic() - start < 90
    lines = proc.stdout.splitlines()
    stored = next(i for i, line in enumerate(lines) if line.startswith("6 of 6 games stored in "))
    summary = (
        "ray: 3 actors on 3 nodes; nodes lost: 0; actors lost: 0; games re-queued: 0; "
        f"sandbox: {SANDBOX}, checked on each node"
    )
    assert lines[stored + 1] == summary
    analysis = "analysed 6 games (0 already done) in "
    assert lines[stored + 2].startswith(analysis), lines
    assert " s on Ray (3 CPUs on 3 nodes) at 5 ms a position: " in lines[stored + 2]
    assert lines[0].startswith("tournament loopback: 6 games")
    assert len([line for line in lines[:stored] if re.match(r"\[\d/6\] ", line)]) == 6
    # Nothing from Ray itself (it would name Ray, its raylets or warn).
    noise = re.compile(r"(?i)\bray\b|raylet|warn|error")
    mine = (summary, lines[stored + 2])
    assert [line for line in lines if noise.search(line) and line not in mine] == []
    assert proc.stderr == ""
    assert (next((tmp_path / "results").iterdir()) / "ray.log").is_file()


NEAR_THE_END = "ob3r2/3y2n1/GN5g/6p1/2v5/8/2R1V3/3YP1BO b b single 0-0 1 -"
"""A round Black wins in 5 plies: every position after it is proven in far less
than the budget, so the values cannot depend on the load of the machine."""


def analysed(directory: Path) -> dict[str, list[tuple[object, ...]]]:
    """Each game's values without the solver's node counts (they depend on what its
    table held from earlier games in the same process)."""
    from arena.analysis.store import AnalysisStore

    with AnalysisStore.open_readonly(directory) as store:
        assert store is not None
        return {
            key: [(v.part, v.player, v.winner, v.distance, v.best, v.choices) for v in g.values]
            for key, _, g in store.all_values()
        }


def test_analysis_on_the_cluster_stores_what_the_local_analysis_stores(tmp_path: Path) -> None:
    """``analyse(..., backend="ray")`` (``arena analyze --backend ray``): every game
    solved in Ray tasks on the cluster, written here, the same values as worker
    processes here give; a second run finds nothing left to do."""
    from arena.analysis.run import analyse
    from arena.analysis.values import UNKNOWN

    toml = write_tournament(tmp_path / "t", games=2, concurrency=None)
    (tmp_path / "t" / "openings.txt").write_text(NEAR_THE_END + "\n")
    toml.write_text(toml.read_text().replace("plies = 2", 'file = "openings.txt"'))
    played = tournament(toml, tmp_path / "results", workers=1)
    outcome = trio.run(played.run)
    played.close()
    assert outcome.complete
    here = outcome.directory
    there = tmp_path / "there"
    shutil.copytree(here, there)

    local = analyse(here, 2000, workers=1)
    on_ray = analyse(there, 2000, backend="ray")
    assert local.analysed == on_ray.analysed == 6 and not on_ray.failed
    assert on_ray.place == "on Ray (3 CPUs on 3 nodes)"
    assert (on_ray.positions, on_ray.proven) == (local.positions, local.proven)
    expected = analysed(here)
    assert all(v[2] != UNKNOWN for values in expected.values() for v in values if v[4])
    assert analysed(there) == expected
    assert (there / "ray.log").is_file()
    again = analyse(there, 2000, backend="ray")
    assert (again.analysed, again.skipped) == (0, 6)


def test_a_node_lost_mid_task_costs_no_result(tmp_path: Path, cluster: Any) -> None:
    """The tasks the analysis runs on (``run_tasks``): a worker node dies, every
    process at once, while each CPU of the cluster runs a task; Ray runs the lost
    task again on a live node and every item's result is kept once.

    Each task waits at a gate and shows it with a mark naming its item and node;
    the node is killed only once three tasks (one per CPU) wait, then the gate
    opens. So the lost node always holds a task in mid-run."""
    from arena.backends.raytasks import run_tasks

    gate = tmp_path / "gate"
    gate.mkdir()
    marks = str(gate)

    def waits_at_the_gate(item: int) -> int:  # pickled by value: a closure
        import os
        import time

        import ray

        node = ray.get_runtime_context().get_node_id()
        with open(os.path.join(marks, f"running-{item}-{node}-{os.getpid()}"), "w"):
            pass
        deadline = time.monotonic() + 60
        while not os.path.exists(os.path.join(marks, "open")) and time.monotonic() < deadline:
            time.sleep(0.01)
        return item * item

    workers = {node.node_id: node for node in cluster.worker_nodes}
    killed: list[str] = []
    problems: list[str] = []

    def kill_while_every_cpu_waits() -> None:
        try:
            deadline = time.monotonic() + 60
            while len(running := list(gate.glob("running-*"))) < 3:
                if time.monotonic() > deadline:
                    problems.append(f"running: {running}")
                    return
                time.sleep(0.01)
            node_id = next(n for n in (p.name.split("-")[2] for p in running) if n in workers)
            kill_node_processes(workers[node_id])
            cluster.remove_node(workers[node_id], allow_graceful=False)
            killed.append(node_id)
        except Exception as exc:  # noqa: BLE001 - reported by the test below
            problems.append(repr(exc))
        finally:
            (gate / "open").touch()

    killer = threading.Thread(target=kill_while_every_cpu_waits)
    kept: list[int] = []
    killer.start()
    try:
        ran = run_tasks(waits_at_the_gate, range(6), kept.append, address=cluster.address)
    finally:
        killer.join(70)
        restore(cluster)
    assert not problems and killed, problems
    assert sorted(kept) == [i * i for i in range(6)]
    assert ran.tasks == 6 and (ran.nodes, ran.cpus) == (3, 3)
    runs: dict[int, list[str]] = {}
    for mark in gate.glob("running-*"):
        _, item, node, _ = mark.name.split("-")
        runs.setdefault(int(item), []).append(node)
    lost = [item for item, nodes in runs.items() if killed[0] in nodes]
    assert lost and all(len(runs[item]) == 2 and runs[item][0] != runs[item][1] for item in lost)
    assert all(len(nodes) == 1 for item, nodes in runs.items() if item not in lost)


def one_game_stored(folder: Path, config_text: str) -> Path:
    """A results folder of one game (no move played, from ``NEAR_THE_END``) whose
    tournament file's text is ``config_text``."""
    with Store.open(folder, name="x", config_text=config_text, fingerprint="f") as store:
        store.add_game(
            "p/1",
            "p",
            GameRecord(
                game="kamisado",
                variant="single",
                players=["a", "b"],
                opening=NEAR_THE_END,
                actions=[],
                score=0.5,
                reason="adjudicated",
            ),
        )
    return folder


def test_cli_analysis_on_ray_bad_input_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cluster nobody answers at, ``--address`` without ``--backend ray``, and no
    Ray installed: one line each, non-zero, at once (as ``arena run`` says them)."""
    from arena.cli import main

    one_game_stored(tmp_path, "")

    def error(*args: str) -> str:
        start = time.monotonic()
        result = CliRunner().invoke(main, ["analyze", str(tmp_path), "--no-report", *args])
        assert time.monotonic() - start < 10
        assert result.exit_code == 1, result.output
        lines = result.output.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("arena: error: "), result.output
        return lines[0].removeprefix("arena: error: ")

    message = error("--backend", "ray", "--address", "127.0.0.1:1")
    assert message.startswith("cannot reach the Ray cluster at 127.0.0.1:1: ")
    message = error("--backend", "ray", "--address", "head")
    assert message.startswith("bad Ray cluster address 'head': expected HOST:PORT")
    assert error("--address", "127.0.0.1:1") == "--address is for --backend ray"
    monkeypatch.setitem(sys.modules, "ray", None)  # "import ray" now fails
    assert error("--backend", "ray") == EXTRA_HINT


def test_actors_stream_each_games_moves_to_the_observer(tmp_path: Path) -> None:
    """The live web view's feed: every game's start and each of its moves, in order,
    comes back from the actors while the games run."""
    from arena.match.events import GameMoved, GameStarted
    from arena.tournament import Observer

    class Watch(Observer):
        wants_events = True

        def __init__(self) -> None:
            self.events: list[GameStarted | GameMoved] = []

        def game_event(self, event: GameStarted | GameMoved) -> None:
            self.events.append(event)

    watch = Watch()
    toml = write_tournament(tmp_path / "t", concurrency=None)
    on_ray = tournament(toml, tmp_path / "ray", backend="ray", observer=watch)
    outcome = trio.run(on_ray.run)
    on_ray.close()
    assert outcome.complete
    with Store.open_existing(outcome.directory) as store:
        games = dict(store.items())
    started = [e.key for e in watch.events if isinstance(e, GameStarted)]
    assert sorted(started) == sorted(games)
    for key, record in games.items():
        plies = [e.ply for e in watch.events if isinstance(e, GameMoved) and e.key == key]
        assert plies == list(range(1, len(record.actions) + 1)), key
    wait_none_with(str(tmp_path))


def test_the_pre_flight_runs_in_the_driver_and_skip_broken_plays_the_rest(
    tmp_path: Path,
) -> None:
    """On Ray too, an entrant that cannot start stops the run before any game (no
    actor is made); with ``skip_broken`` the others play on the cluster and its
    games are not played, not stored as its losses."""
    from arena.backends.preflight import BrokenEntrants

    broken = (
        '[[bots]]\nname = "gone"\ncommand = ["/bin/sh", "-c", "echo cannot start >&2; exit 1"]\n'
    )
    toml = write_tournament(tmp_path / "t", games=2, bots=2, extra_bots=broken)
    stopped = tournament(toml, tmp_path / "results", backend="ray", workers=1)
    with pytest.raises(BaseException) as info:  # through trio's nursery: a group
        trio.run(stopped.run)
    stopped.close()
    leaves = info.value.exceptions if isinstance(info.value, BaseExceptionGroup) else [info.value]
    (error,) = [e for e in leaves if isinstance(e, BrokenEntrants)] or [info.value]
    assert isinstance(error, BrokenEntrants), info.value
    assert error.lines == ["gone: did not start: exited with code 1; it wrote: cannot start"]
    assert stopped.pool is None and stopped.progress.done == 0
    run = tournament(toml, tmp_path / "results", backend="ray", workers=1, skip_broken=True)
    outcome = trio.run(run.run)
    run.close()
    games = stored(outcome.directory)
    assert len(games) == 2 and all("gone" not in players for players, *_ in games.values())
    assert outcome.progress.skipped == 4 and list(outcome.progress.broken) == ["gone"]
    wait_none_with(str(tmp_path))
