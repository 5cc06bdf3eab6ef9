"""Fair compute (``arena/engine/cpu.py``): one CPU share per bot, ``threads`` cores at
most, and nothing on the opponent's time. Real sandboxed bots (``tests/cpu_bot.py``),
their CPU time read from their own cgroups.

Fairness is measured relatively: a machine shared with other work changes every
figure, so each comparison is between runs interleaved in the same test.
"""

from __future__ import annotations

import os
import statistics
import sys
from pathlib import Path

import needs
import trio

from arena.engine import cgroups, cpuset
from arena.engine.bot import Engine
from arena.engine.config import EngineConfig
from arena.games import get_game
from arena.match.clock import TimeControl
from arena.match.record import GameRecord
from arena.match.referee import play_game
from arena.match.wire import clock_info
from arena.protocol.messages import Go, NewGame

HERE = Path(__file__).resolve().parent
CPU_BOT = [sys.executable, str(HERE / "cpu_bot.py")]
MEASURE = 1.0
"""Seconds of wall time over which a bot's CPU use is measured."""


def bot(mode: str, *args: object, **kw: object) -> EngineConfig:
    return EngineConfig(
        name=f"{mode}{''.join(map(str, args))}",
        command=[*CPU_BOT, mode, *map(str, args)],
        quit_timeout=0.5,
        **kw,  # type: ignore[arg-type]
    )


def need_cgroups() -> None:
    needs.sandbox()
    if not cgroups.available():
        needs.missing(f"no cgroup for bots here: {cgroups.hierarchies()}")


async def cores_used(engine: Engine, seconds: float = MEASURE) -> float:
    """The bot's CPU seconds per wall second, from its cgroup, over ``seconds``."""
    used, start = engine.cpu_seconds(), trio.current_time()
    assert used is not None, "no CPU usage counted for the bot"
    await trio.sleep(seconds)  # a measured interval, not a wait for an event
    now = engine.cpu_seconds()
    assert now is not None
    return (now - used) / (trio.current_time() - start)


async def test_eight_busy_processes_with_threads_1_use_at_most_one_core() -> None:
    need_cgroups()
    # ponder: the bot is measured between its answers, when it would be frozen otherwise
    async with Engine(bot("hog", 8, threads=1, ponder=True)) as engine:
        ident = await engine.start("kamisado", "standard")
        assert ident.name == "cpu-bot cores=1"
        await trio.sleep(0.2)  # the helpers start
        used = await cores_used(engine)
    # Eight spinning processes in sessions of their own take every core the machine
    # gives them without the quota (about 1.9 of 2 on a quiet machine).
    assert used <= 1.1, f"the bot used {used:.2f} cores"
    assert used >= 0.1, f"the bot ran at {used:.2f} cores: the measure is not its CPU"


async def test_threads_is_the_quota_and_the_cores_in_hello() -> None:
    need_cgroups()
    async with Engine(bot("quiet", threads=3)) as engine:
        ident = await engine.start("kamisado", "standard")
        assert ident.name == "cpu-bot cores=3"
        group = engine._cgroup
        assert group is not None and group.cpu is not None
        cpu_folder = next(f for f in group.cpu.folders if "/cpu/" in f or "cpu," in f)
        quota = Path(cpu_folder, "cpu.cfs_quota_us").read_text().split()[0]
        period = Path(cpu_folder, "cpu.cfs_period_us").read_text().split()[0]
        shares = Path(cpu_folder, "cpu.shares").read_text().split()[0]
    assert (int(quota), int(period), int(shares)) == (300_000, 100_000, 1024)
    assert not os.path.exists(cpu_folder), "the bot's CPU group outlived it"


def test_a_tournament_entry_declares_its_threads(tmp_path: Path) -> None:
    from arena.plan.config import ConfigError, load_config
    from arena.plan.launch import entry_config

    text = """name = "t"
[[bots]]
name = "a"
command = "builtin:random"
threads = 2
[[bots]]
name = "b"
command = "builtin:random"
"""
    path = tmp_path / "t.toml"
    path.write_text(text)
    config = load_config(path)
    assert [entry_config(config, n).threads for n in ("a", "b")] == [2, 1]
    path.write_text(text.replace("threads = 2", "threads = 0"))
    try:
        load_config(path)
    except ConfigError as exc:
        assert "bots[0] (a).threads" in str(exc) and ">= 1" in str(exc)
    else:
        raise AssertionError("threads = 0 was accepted")


WORK = 150_000
"""Loop iterations of the fixed-work bot per move: about 25 ms of one core."""


async def first_go(engine: Engine, *, counted: bool = True) -> None:
    """A ``newgame`` and one ``go`` of the initial position (the bot answers, then is idle)."""
    game = get_game("kamisado")
    state = game.new_state("single")
    await engine.new_game(
        NewGame(
            game="kamisado",
            variant="single",
            player=0,
            players=["a", "b"],
            position=state.observation_text(0),
            time_control="60+0",
        )
    )
    control = TimeControl.parse("60+0")
    from arena.match.clock import Clock

    clocks = [Clock(control), Clock(control)]
    go = Go(
        player=0,
        position=state.observation_text(0),
        observation=state.observation(0),
        history=state.history(0),
        legal=state.legal_actions(),
        clock=clock_info(clocks, 0),
    )
    reply = await engine.go(go, timeout=30)
    assert (reply.cpu_ns is not None) == counted


async def test_a_bot_not_on_move_accumulates_no_cpu_time_unless_it_ponders() -> None:
    """The spinner thinks in a thread from its answer on: frozen, that costs nothing."""
    need_cgroups()
    async with Engine(bot("spin")) as frozen, Engine(bot("spin", ponder=True)) as pondering:
        for engine in (frozen, pondering):
            await engine.start("kamisado", "single")
            await first_go(engine)
        off_move = await cores_used(frozen)
        pondered = await cores_used(pondering)
        kinds = (frozen.freeze_kind, pondering.freeze_kind)
        record = frozen.sandbox_record
    assert off_move < 0.02, f"a frozen bot used {off_move:.3f} cores off move"
    assert pondered > 0.2, f"a pondering bot used only {pondered:.3f} cores off move"
    assert kinds == ("freezer", "ponder")
    assert (record.freeze, record.cores) == ("freezer", 1)


def work_ms(record: GameRecord, player: int = 0) -> list[int]:
    return [a.ms for a in record.actions if a.player == player and not a.forced]


async def test_a_hog_opponent_does_not_slow_a_fixed_work_bot() -> None:
    """Eight busy processes in sessions of their own, on the opponent's side: the
    fixed-work bot's time per move stays within 10 % of its time against a quiet
    opponent (games interleaved), and it loses no game on time at 2+0."""
    need_cgroups()
    game = get_game("kamisado")
    slow = TimeControl.parse("60+0")
    fast = TimeControl.parse("2+0")
    async with (
        Engine(bot("work", WORK)) as worker,
        Engine(bot("hog", 8)) as hog,
        Engine(bot("quiet")) as quiet,
    ):
        times: dict[str, list[float]] = {"hog": [], "quiet": []}
        records: list[GameRecord] = []
        for _ in range(5):
            for name, other in (("quiet", quiet), ("hog", hog)):
                record = await play_game(
                    game, game.new_state("single"), [worker, other], [slow, slow], variant="single"
                )
                assert record.faulty is None, record.detail
                times[name].append(statistics.median(work_ms(record)))
                records.append(record)
            await hog.stop()  # no hog at all during the next quiet game (restarted after)
        blitz = [
            await play_game(
                game, game.new_state("single"), [worker, hog], [fast, fast], variant="single"
            )
            for _ in range(2)
        ]
    # Each round's ratio, of two games played one after the other, then their median:
    # the machine's load (other work on it) swings between rounds more than within one.
    ratio = statistics.median(h / q for h, q in zip(times["hog"], times["quiet"], strict=True))
    lost = [f"{r.reason}: {r.detail}" for r in blitz if r.faulty is not None]
    assert ratio <= 1.10 and not lost, (
        f"against the hog {times['hog']} ms a move, quiet {times['quiet']}; 2+0: {lost}"
    )

    # Time and CPU on record: the fixed-work bot's CPU per move is its work (tens of
    # ms), never more than the wall time charged (one thread, one core).
    worker_moves = [a for r in records for a in r.actions if a.player == 0 and not a.forced]
    assert all(a.cpu_ms is not None for a in worker_moves)
    assert statistics.median(a.cpu_ms for a in worker_moves) >= 5
    assert all(a.cpu_ms <= a.ms + 2 for a in worker_moves), worker_moves


async def test_a_hog_in_one_game_does_not_slow_the_game_beside_it() -> None:
    """``concurrency = 2`` with affinity: game slot 0 on core 0, slot 1 on core 1 (as
    :class:`~arena.backends.slots.GameSlots` sets them). The fixed-work bot of slot 1
    takes within 10 % of its time per move beside a quiet game when slot 0 holds a bot
    with eight busy processes that also works on its moves (rounds interleaved, median
    of per-round ratios). Each game's bots report the cores they may run on."""
    need_cgroups()
    if len(cpuset.machine_cores()) < 2 or cpuset.missing():
        needs.missing(f"two cores and a cpuset cgroup: {cpuset.missing()}")
    game = get_game("kamisado")
    slow = TimeControl.parse("60+0")
    times: dict[str, list[float]] = {"hog": [], "quiet": []}
    async with (
        Engine(bot("work", WORK)) as worker,
        Engine(bot("quiet")) as partner,
        Engine(bot("hog", 8, WORK)) as hog,
        Engine(bot("quiet")) as quiet_a,
        Engine(bot("quiet")) as quiet_b,
    ):
        neighbours = {"hog": [hog, quiet_a], "quiet": [quiet_b, quiet_a]}
        for _ in range(5):
            for name in ("quiet", "hog"):
                pair = neighbours[name]
                result: list[GameRecord] = []

                async def beside(pair: list[Engine] = pair) -> None:
                    cpuset.SLOT_CPUS.set(cpuset.slot_cpus(0, 1))  # this task's engines
                    while True:  # games until the measured one is over
                        await play_game(
                            game, game.new_state("single"), pair, [slow, slow], variant="single"
                        )

                async def measured(result: list[GameRecord] = result) -> None:
                    cpuset.SLOT_CPUS.set(cpuset.slot_cpus(1, 1))
                    result.append(
                        await play_game(
                            game,
                            game.new_state("single"),
                            [worker, partner],
                            [slow, slow],
                            variant="single",
                        )
                    )
                    nursery.cancel_scope.cancel()

                async with trio.open_nursery() as nursery:
                    nursery.start_soon(beside)
                    nursery.start_soon(measured)
                for engine in pair:  # cut off mid-game: started afresh next time
                    await engine.stop(graceful=False)
                (record,) = result
                assert record.faulty is None, record.detail
                assert record.identities[0]["version"] == "cpus=1", record.identities
                times[name].append(statistics.median(work_ms(record)))
    ratio = statistics.median(h / q for h, q in zip(times["hog"], times["quiet"], strict=True))
    assert ratio <= 1.10, f"beside the hog {times['hog']} ms a move, beside quiet {times['quiet']}"


async def test_a_cpu_clock_charges_cpu_time_and_a_sleeper_loses_by_the_ceiling() -> None:
    """``clock = "cpu"``: a move is charged the CPU time of the bot's cgroup (the
    clocks the bots are shown fall by each action's ``cpu_ms``), not its wall time
    (a hog pondering beside it slows the wall time, hardly the charge); a sleeping bot
    is charged nothing but loses at three times its budget in wall time, and the
    record says both figures; on the wall clock the same sleep loses at the budget."""
    from arena.match.events import GameMoved
    from arena.match.referee import RefereeSettings

    need_cgroups()
    game = get_game("kamisado")
    cpu = RefereeSettings(clock="cpu")
    short = TimeControl.parse("0.3+0")  # 0.35 s with the margin, 1.05 s of wall

    async def sleepy(pause: float, settings: RefereeSettings) -> tuple[GameRecord, float]:
        async with Engine(bot("sleep", pause)) as sleeper, Engine(bot("quiet")) as quiet:
            await sleeper.start("kamisado", "single")
            started = trio.current_time()
            record = await play_game(
                game,
                game.new_state("single"),
                [sleeper, quiet],
                [short, short],
                variant="single",
                settings=settings,
            )
            return record, trio.current_time() - started

    record, _ = await sleepy(0.6, cpu)  # asleep 0.6 s: within the ceiling, charged nothing
    assert record.faulty is None, record.detail
    first = record.actions[0]
    assert first.ms >= 600 and first.cpu_ms is not None and first.cpu_ms < 50, first
    record, _ = await sleepy(0.6, RefereeSettings())  # the wall clock: lost at the budget
    assert (record.reason, record.faulty) == ("time", 0), record.detail
    assert "no answer within 0.350 s" in record.detail and "ms of CPU" in record.detail
    record, took = await sleepy(5, cpu)
    assert (record.reason, record.faulty) == ("time", 0), record.detail
    assert "no answer within 1.050 s" in record.detail, record.detail
    assert 1.0 <= took < 2.5, took

    slow = TimeControl.parse("60+0")
    charged: dict[str, list[float]] = {"hog": [], "quiet": []}
    walls: dict[str, list[float]] = {"hog": [], "quiet": []}
    async with Engine(bot("work", WORK)) as worker, Engine(bot("quiet")) as partner:
        for _ in range(3):
            for name in ("quiet", "hog"):
                shown: list[int] = []

                def seen(event: GameMoved, shown: list[int] = shown) -> None:
                    if event.player == 0 and not event.forced:
                        shown.append(event.clocks[0])

                async with (
                    Engine(bot("hog", 8, ponder=True)) if name == "hog" else Engine(bot("quiet"))
                ) as beside:
                    await beside.start("kamisado", "single")  # the hog spins from its start
                    record = await play_game(
                        game,
                        game.new_state("single"),
                        [worker, partner],
                        [slow, slow],
                        variant="single",
                        settings=cpu,
                        on_action=seen,
                    )
                assert record.faulty is None, record.detail
                moves = [a for a in record.actions if a.player == 0 and not a.forced]
                assert all(a.cpu_ms is not None for a in moves)
                # The clock shown after each move fell by that move's CPU time (whole ms).
                left = [60_000, *shown]
                for before, after, move in zip(left, left[1:], moves, strict=False):
                    assert abs((before - after) - move.cpu_ms) <= 2, (before, after, move)
                charged[name].append(statistics.median(a.cpu_ms for a in moves))
                walls[name].append(statistics.median(a.ms for a in moves))
    ratio = statistics.median(h / q for h, q in zip(charged["hog"], charged["quiet"], strict=True))
    assert ratio <= 1.15, f"charged with a hog beside {charged['hog']}, without {charged['quiet']}"


def process_cpu(pid: int) -> float:
    """CPU seconds of process ``pid`` (every thread of it), from ``/proc``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def test_without_a_cgroup_a_bot_off_move_is_stopped_by_signals() -> None:
    """An unconfined bot has no cgroup: its process group gets SIGSTOP and SIGCONT."""
    from arena.engine.sandbox import Sandbox

    async with Engine(bot("spin", sandbox=Sandbox(mode="none"))) as engine:
        await engine.start("kamisado", "single")
        await first_go(engine, counted=False)
        pid = engine.pid
        assert pid is not None and engine.freeze_kind == "sigstop"
        before = process_cpu(pid)
        await trio.sleep(MEASURE)  # a measured interval
        off_move = process_cpu(pid) - before
        await first_go(engine, counted=False)  # continued: it answers again
    assert off_move < 0.05, f"a stopped bot used {off_move:.2f} s of CPU off move"


def test_the_v2_group_is_written_as_the_kernel_documents(tmp_path: Path) -> None:
    """cgroup v2 (Documentation/admin-guide/cgroup-v2.rst): ``cpu.weight`` and
    ``cpu.max`` where the parent delegates the cpu controller, ``cgroup.freeze``
    ``1``/``0``, and ``usage_usec`` of ``cpu.stat``. This machine is v1, so the files
    are plain ones here, laid out as the kernel lays them out."""
    from arena.engine.cpu import CpuGroup

    (tmp_path / "cgroup.subtree_control").write_text("cpu memory pids\n")
    folder = tmp_path / "arena-1-0"
    folder.mkdir()
    for name, text in (
        ("cpu.weight", "100\n"),
        ("cpu.max", "max 100000\n"),
        ("cgroup.freeze", "0\n"),
        ("cpu.stat", "usage_usec 1234\nuser_usec 1000\nsystem_usec 234\n"),
    ):
        (folder / name).write_text(text)
    group = CpuGroup("arena-1-0", 2, str(folder))
    assert group.freeze_kind == "cgroup.freeze" and group.folders == []
    assert (folder / "cpu.max").read_text() == "200000 100000"
    assert (folder / "cpu.weight").read_text() == "100"
    assert group.usage_ns() == 1_234_000
    group.freeze()
    assert (folder / "cgroup.freeze").read_text()[0] == "1"
    group.thaw()
    assert (folder / "cgroup.freeze").read_text()[0] == "0"
    assert group.try_remove()

    # A slot's cores: ``cpuset.cpus`` in the bot's group, the controller enabled for the
    # arena's children first (``+cpuset`` written to its ``cgroup.subtree_control``).
    (folder / "cpuset.cpus").write_text("\n")
    token = cpuset.SLOT_CPUS.set("1")
    try:
        group = CpuGroup("arena-1-0", 1, str(folder))
    finally:
        cpuset.SLOT_CPUS.reset(token)
    assert (tmp_path / "cgroup.subtree_control").read_text() == "+cpuset"
    assert (folder / "cpuset.cpus").read_text() == "1" and group.cpus == "1"
    assert group.try_remove()


def test_a_tournament_says_how_bots_are_held_and_ponder_reaches_them(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from arena.cli import main
    from arena.storage.store import Store

    need_cgroups()
    for ponder, said, kind in (
        ("false", "frozen off move (freezer)", "freezer"),
        ("true", "not frozen off move (ponder)", "ponder"),
    ):
        toml = tmp_path / f"p{ponder}.toml"
        toml.write_text(
            f'name = "p{ponder}"\nvariant = "single"\ntc = "10+0.1"\ngames_per_pairing = 2\n'
            f"concurrency = 1\nponder = {ponder}\n"
            '[[bots]]\nname = "a"\ncommand = "builtin:random"\nthreads = 2\n'
            '[[bots]]\nname = "b"\ncommand = "builtin:random"\n'
        )
        result = CliRunner().invoke(main, ["run", str(toml), "--results", str(tmp_path)])
        assert result.exit_code == 0, result.output
        assert said in result.output and "one CPU share" in result.output, result.output
        with Store.open_existing(tmp_path / f"p{ponder}") as store:
            records = [r for _, r in store.items()]
        assert records
        for r in records:
            cores = {"a": 2, "b": 1}
            assert [(s.freeze, s.cores) for s in r.sandbox] == [
                (kind, cores[name]) for name in r.players
            ]


def test_each_game_slot_runs_on_cores_of_its_own(tmp_path: Path) -> None:
    """``concurrency = 2`` on two cores: each slot's bots run on one core of their own
    (in this process and in worker processes), both bots of a game on the same one;
    ``affinity = false`` leaves them every core; asking for more cores than the
    machine has is refused at load, in one line."""
    from click.testing import CliRunner

    from arena.cli import main
    from arena.plan.config import ConfigError, load_config
    from arena.storage.store import Store

    need_cgroups()
    cores = cpuset.machine_cores()
    if len(cores) < 2 or cpuset.missing():
        needs.missing(f"two cores and a cpuset cgroup: {cpuset.missing()}")
    bots = "".join(
        f'[[bots]]\nname = "{n}"\ncommand = "{sys.executable} {HERE / "cpu_bot.py"} quiet"\n'
        for n in "abc"
    )
    everywhere = "cpus=" + ",".join(map(str, cores))
    for name, affinity, workers, said in (
        ("in", "", "1", "each game on 1 core of its own (affinity)"),
        ("wk", "", "2", "each game on 1 core of its own (affinity)"),
        ("off", 'affinity = false\nclock = "cpu"\n', "1", "games on every core (affinity = false)"),
    ):
        toml = tmp_path / f"{name}.toml"
        toml.write_text(
            f'name = "{name}"\nvariant = "single"\ntc = "10+0.1"\ngames_per_pairing = 4\n'
            f"concurrency = 2\n{affinity}{bots}"
        )
        result = CliRunner().invoke(
            main, ["run", str(toml), "--results", str(tmp_path), "--workers", workers]
        )
        assert result.exit_code == 0, result.output
        assert said in result.output, result.output
        charged = "CPU time charged (wall-clock ceiling 3x" if affinity else "wall time charged"
        assert charged in result.output, result.output
        with Store.open_existing(tmp_path / name) as store:
            records = [r for _, r in store.items()]
        assert len(records) == 12 and all(r.faulty is None for r in records)
        pinned = [[ident["version"] for ident in r.identities] for r in records]
        if affinity:
            assert all(p == [everywhere] * 2 for p in pinned), pinned
        else:
            assert all(p[0] == p[1] for p in pinned), pinned
            assert {p[0] for p in pinned} == {f"cpus={cores[0]}", f"cpus={cores[1]}"}, pinned

    toml = tmp_path / "big.toml"
    toml.write_text(f'name = "big"\nconcurrency = {len(cores) + 1}\naffinity = true\n{bots}')
    try:
        load_config(toml)
    except ConfigError as exc:
        message = str(exc)
        assert "\n" not in message and "affinity" in message and "cores" in message, message
    else:
        raise AssertionError("a file asking for more cores than the machine has was accepted")


async def test_a_bot_between_games_stays_frozen() -> None:
    """After ``gameover`` an idle engine (a tournament's, waiting for its next pairing)
    runs on no one's time: the line waits until its next request."""
    need_cgroups()
    game = get_game("kamisado")
    control = TimeControl.parse("60+0")
    async with Engine(bot("spin")) as spinner, Engine(bot("quiet")) as quiet:
        record = await play_game(
            game, game.new_state("single"), [spinner, quiet], [control, control], variant="single"
        )
        assert record.faulty is None, record.detail
        idle = await cores_used(spinner)
        again = await play_game(
            game, game.new_state("single"), [quiet, spinner], [control, control], variant="single"
        )
    assert idle < 0.02, f"the bot used {idle:.3f} cores between games"
    assert again.faulty is None, again.detail  # it read its gameover, then played on


def test_arena_play_takes_threads_and_ponder() -> None:
    from click.testing import CliRunner

    from arena.cli import main

    need_cgroups()
    base = ["play", "random", "random", "--seed", "1", "--variant", "single"]
    for extra, said in (
        (["--threads", "2"], "2 cores, frozen off move (cgroup freezer)"),
        (["--ponder"], "1 core, not frozen off move (ponder)"),
    ):
        result = CliRunner().invoke(main, [*base, *extra])
        assert result.exit_code == 0, result.output
        lines = [line for line in result.output.splitlines() if line.startswith("sandbox of")]
        assert len(lines) == 2 and all(line.endswith(said) for line in lines), result.output


ARENA_KILLED_WITH_ITS_CHILDREN = r"""
import sys, trio
sys.path.insert(0, sys.argv[1])
from test_cpu import bot, first_go
from arena.engine.bot import Engine

async def main():
    config = bot("spin", sys.argv[2])  # the marker, a count the spinner ignores
    async with Engine(config) as engine:
        await engine.start("kamisado", "single")
        await first_go(engine)  # answered: frozen now
        print(engine.freeze_kind, flush=True)
        await trio.sleep_forever()

trio.run(main)
"""


def test_a_frozen_bot_dies_when_its_arena_is_killed_with_its_children(tmp_path: Path) -> None:
    """A Ray worker that is killed has its raylet SIGKILL its direct children as well
    (``kill_child_processes_on_worker_exit``). A frozen v1 process ignores SIGKILL
    until thawed, and the guard that thaws a dead arena's bots was such a child:
    killed with the arena, it left the frozen bot alive for good."""
    import signal
    import subprocess

    from procs import described, live_with, wait_none_with

    need_cgroups()
    marker = str(900_000_000 + os.getpid())
    script = tmp_path / "killed_arena.py"
    script.write_text(ARENA_KILLED_WITH_ITS_CHILDREN)
    arena = subprocess.Popen(
        [sys.executable, str(script), str(HERE), marker], stdout=subprocess.PIPE, text=True
    )
    try:
        assert arena.stdout is not None
        assert arena.stdout.readline().strip() == "freezer"
        assert live_with(marker), "the bot is not running"
        children = [
            pid
            for pid in (int(p) for p in os.listdir("/proc") if p.isdigit())
            if _parent(pid) == arena.pid
        ]
        for pid in [*children, arena.pid]:  # as the raylet may: its children, then it
            os.kill(pid, signal.SIGKILL)
    finally:
        arena.kill()
        arena.wait()
    try:
        wait_none_with(marker, limit=10)
    except AssertionError:
        left = live_with(marker)
        for pid in left:  # leave no frozen process behind for the rest of the suite
            cgroups_thaw_all()
            os.kill(pid, signal.SIGKILL)
        raise AssertionError(f"left alive: {described(left)}") from None


def _parent(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def cgroups_thaw_all() -> None:
    """Thaw every bot group of every arena (a failed test's cleanup)."""
    from arena.engine.cpu import hierarchies

    freezer = hierarchies().freezer
    if not freezer:
        return
    for name in os.listdir(freezer):
        if name.startswith("arena-"):
            try:
                with open(os.path.join(freezer, name, "freezer.state"), "w") as f:
                    f.write("THAWED")
            except OSError:
                pass
