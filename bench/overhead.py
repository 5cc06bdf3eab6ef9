"""Arena overhead: what one ply costs through the arena vs a raw pipe round trip.

Both figures come from the same run, on the same machine, with the same kind of
pipes driven by trio:

* **arena ply**: games between two instant bots (each a tiny Python program
  that answers the first legal action) played by the referee through
  :class:`~arena.engine.bot.Engine`. Wall time over non-forced plies, so it holds
  everything the arena does per decision: legal actions, observation and
  history, encoding the ``go``, the pipe both ways, decoding the answer, clocks,
  the legality check and applying the action.
* **raw round trip**: a Python process that echoes each line back, sent lines
  of the same size as the average ``go`` message, read back by the same
  :class:`~arena.protocol.messages.LineReader`.

The ratio (arena ply / raw round trip) says how much the arena adds on top of
the unavoidable cost of asking a process. Target: at most 3. Batches of both
are interleaved so they see the same machine; the best batch is the figure to
compare (the median shows the noise). The bot reads the ``go`` line without a
JSON parser so that its own work stays close to the echo's, and the last line
separates the rules core's share (observation text and fields, legal actions),
which belongs to the game rather than to the arena.

The arena's own CPU per decision is printed on its own line: this process's CPU
time (``time.process_time``: every thread of it, none of its children, so no
bot's) over the same batches. Wall time can hide CPU behind the bots' turns;
CPU is what limits how many games a core runs at once, and it is where the
arena trails fastchess (64 us against 45 us a move when issue 39 measured both).

The bubblewrap sandbox's cost is measured beside it: the same games with both
bots sandboxed and unconfined (interleaved batches, so the per-decision ratio
on/off compares like with like), and the start-up cost per bot process: a
sandboxed ``/bin/true`` against a plain one (bwrap's own cost), and a bot's
start to its ``identity`` answer with and without the sandbox.

Freezing (issue 35): the same sandboxed games with the bot off move frozen (the
default) and not (``ponder``), interleaved, as a per-decision ratio (target at
most 1.2 with instant bots), and the freezer alone: the time of each freeze and
thaw inside those games, whose sum is what a real move pays (printed against a
100 ms move; the thaw falls inside the time charged to the bot).

    python bench/overhead.py [--decisions 1000] [--rounds 7] [--variant standard]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

import trio

from arena.engine.bot import Engine
from arena.engine.config import EngineConfig
from arena.engine.confine import bot_identity, seccomp_fd
from arena.engine.sandbox import Sandbox, probe, wrap
from arena.games import Game, State, get_game
from arena.match.clock import Clock, TimeControl
from arena.match.record import ActionRecord
from arena.match.referee import RefereeSettings, play_game
from arena.match.wire import clock_info
from arena.protocol.messages import Go, LineReader, encode_line

FIRST_LEGAL = r"""
# Answers the first legal action without a JSON parser, relying on the compact
# shape the arena writes (protocol.md, section 1: "type" first, then "id"), like
# the C example bot: its own cost stays close to the echo process's, so the
# ratio shows the arena's.
import sys
inp, out = sys.stdin.buffer, sys.stdout.buffer
for line in inp:
    end = line.index(b'"', 9)
    kind = line[9:end]
    if kind == b"quit":
        break
    if kind == b"gameover":
        continue
    ident = line[end + 7 : line.find(b",", end + 7)]  # after '","id":'
    if kind == b"go":
        at = line.rindex(b'"legal":["') + 10
        action = line[at : line.index(b'"', at)]
        out.write(b'{"type":"action","id":' + ident + b',"action":"' + action + b'"}\n')
    elif kind == b"hello":
        out.write(b'{"type":"identity","id":' + ident + b',"protocol":1,"name":"first-legal",'
                  b'"games":["kamisado"]}\n')
    elif kind == b"newgame":
        out.write(b'{"type":"ready","id":' + ident + b'}\n')
    elif kind == b"ping":
        out.write(b'{"type":"pong","id":' + line[end + 7 : line.index(b"}", end)] + b'}\n')
    out.flush()
"""

FASTCHESS_CPU_US = 45
"""fastchess's own CPU per move with instant scripted engines at concurrency 1, measured
on this project's machine beside the arena (issue 39: the arena spent 64 us then): the
reference the arena's CPU per decision is compared with, not a figure of this run."""

ECHO = """
import sys
inp, out = sys.stdin.buffer, sys.stdout.buffer
for line in inp:
    out.write(line)
    out.flush()
"""


def rules_cost_us(game: Game, variant: str, repeat: int = 5) -> float:
    """Microseconds per decision the rules core alone needs for what the referee
    asks of it (observation text and fields, history, legal actions, applying
    the action), replaying first-legal games in-process: the part of the arena's
    cost that belongs to the game, not to the arena."""
    best = float("inf")
    for _ in range(repeat):
        state, decisions = game.new_state(variant), 0
        t0 = time.perf_counter()
        while not state.is_terminal():
            player = state.current_player()
            legal = state.legal_actions()
            if len(legal) > 1:
                state.observation_text(player)
                state.observation(player)
                state.history(player)
                decisions += 1
            state.apply_action(legal[0])
        best = min(best, (time.perf_counter() - t0) / decisions * 1e6)
    return best


def go_sizes(opening: State, actions: list[ActionRecord], control: TimeControl) -> list[int]:
    """Bytes of each ``go`` line the referee wrote in a game (rebuilt by replay)."""
    state, clock, sizes = opening.clone(), Clock(control), []
    for x in actions:
        if not x.forced:
            go = Go(
                player=x.player,
                position=state.observation_text(x.player),
                observation=state.observation(x.player),
                history=state.history(x.player),
                legal=state.legal_actions(),
                clock=clock_info((clock, clock), x.player),
            )
            sizes.append(len(encode_line(go)))
        state.apply_action(x.action)
    return sizes


@dataclass
class Batch:
    """One timed batch: operations, wall seconds, CPU seconds of this (arena) process."""

    ops: int
    wall: float
    cpu: float

    @property
    def wall_us(self) -> float:
        return self.wall / self.ops * 1e6

    @property
    def cpu_us(self) -> float:
        return self.cpu / self.ops * 1e6


class Timer:
    def __enter__(self) -> Timer:
        self.wall, self.cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.wall = time.perf_counter() - self.wall
        self.cpu = time.process_time() - self.cpu


class ArenaRun:
    """Two first-legal bots kept running across batches of whole games."""

    def __init__(self, engines: list[Engine], variant: str) -> None:
        self.engines = engines
        self.variant = variant
        self.game = get_game("kamisado")
        self.control = TimeControl.parse("1000+0")
        self.games = self.plies = 0

    async def batch(self, min_decisions: int) -> tuple[Batch, list[int]]:
        """Whole games until ``min_decisions`` non-forced plies; also the go line
        sizes of the first game (rebuilt by replay, outside the timing)."""
        decisions, wall, cpu, sizes = 0, 0.0, 0.0, []
        while decisions < min_decisions:
            opening = self.game.new_state(self.variant)
            with Timer() as t:
                record = await play_game(
                    self.game,
                    opening,
                    self.engines,
                    [self.control, self.control],
                    variant=self.variant,
                    settings=RefereeSettings(max_plies=2000),
                )
            wall, cpu = wall + t.wall, cpu + t.cpu
            assert record.faulty is None, record
            decisions += sum(1 for x in record.actions if not x.forced)
            self.games += 1
            self.plies += len(record.actions)
            if not sizes:
                sizes = go_sizes(opening, record.actions, self.control)
        return Batch(decisions, wall, cpu), sizes


async def raw_batch(proc: trio.Process, reader: LineReader, line: bytes, count: int) -> Batch:
    """``count`` round trips of ``line`` through the echo process."""
    with Timer() as t:
        for _ in range(count):
            await proc.stdin.send_all(line)
            await reader.receive_line()
    return Batch(count, t.wall, t.cpu)


def spawn_ms(argv: list[str] | None, count: int) -> list[float]:
    """Milliseconds to run ``argv`` to its exit, ``count`` times (``None``: ``/bin/true``
    sandboxed as a bot is, with its seccomp filter and, under a root arena, its user)."""
    times = []
    for _ in range(count):
        t0 = time.perf_counter()
        if argv is None:
            fd = seccomp_fd(refuse_memfd=False)
            watched, watch = os.pipe()  # the reaper's pipe, as the engine gives it
            boxed = wrap(
                Sandbox(mode="bwrap"),
                ["/bin/true"],
                None,
                seccomp_fd=fd,
                identity=bot_identity(Sandbox().user),
                watch_fd=watched,
            )
            subprocess.run(boxed, check=True, pass_fds=(fd, watched), start_new_session=True)
            for end in (fd, watched, watch):
                os.close(end)
        else:
            subprocess.run(argv, check=True)
        times.append((time.perf_counter() - t0) * 1000)
    return times


async def start_ms(config: EngineConfig, variant: str, count: int) -> list[float]:
    """Milliseconds from spawning the bot to reading its ``identity``, ``count`` times."""
    times = []
    async with Engine(config) as engine:
        for _ in range(count):
            t0 = time.perf_counter()
            await engine.start("kamisado", variant)
            times.append((time.perf_counter() - t0) * 1000)
            await engine.stop()
    return times


async def startup_report(bot: Path, variant: str, count: int) -> None:
    reason = probe()
    if reason is not None:
        print(f"sandbox: not measured ({reason})")
        return
    true = "/bin/true"
    bare: list[list[float]] = []
    boxed: list[list[float]] = []
    for _ in range(3):  # interleaved rounds against load drifts
        bare.append(spawn_ms([true], count))
        boxed.append(spawn_ms(None, count))
    command = [sys.executable, str(bot)]
    starts: dict[str, list[list[float]]] = {}
    for mode in ("none", "bwrap", "none", "bwrap"):
        cfg = EngineConfig(name=mode, command=command, sandbox=Sandbox(mode=mode))  # type: ignore[arg-type]
        starts.setdefault(mode, []).append(await start_ms(cfg, variant, count))

    def median(rounds: list[list[float]]) -> float:
        """The best round's median: a round of a busy moment does not count."""
        return min(statistics.median(r) for r in rounds)

    def fastest(rounds: list[list[float]]) -> float:
        """The fastest single start: load only ever adds, so on a busy machine this is
        the closest figure to a quiet one's."""
        return min(min(r) for r in rounds)

    on, off = starts["bwrap"], starts["none"]
    print(
        f"sandbox start-up: /bin/true {median(boxed):.1f} ms in bwrap vs {median(bare):.1f} ms "
        f"bare = {median(boxed) - median(bare):.1f} ms per bot process (target < 10; fastest "
        f"{fastest(boxed) - fastest(bare):.1f} ms); a Python bot to its identity "
        f"{median(on):.1f} ms vs {median(off):.1f} ms (+{median(on) - median(off):.1f} ms; "
        f"fastest +{fastest(on) - fastest(off):.1f} ms); medians of {count}, best of rounds"
    )


async def main_async(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        os.chmod(tmp, 0o755)  # a root arena's bots run as nobody: their folder must be readable
        bot, echo = Path(tmp, "first_legal.py"), Path(tmp, "echo.py")
        bot.write_text(textwrap.dedent(FIRST_LEGAL))
        echo.write_text(textwrap.dedent(ECHO))
        await startup_report(bot, args.variant, args.starts)
        boxed = probe() is None

        def configs(mode: str, ponder: bool = False) -> list[EngineConfig]:
            return [
                EngineConfig(
                    name=f"first-legal-{i}",
                    command=[sys.executable, str(bot)],
                    sandbox=Sandbox(mode=mode),
                    ponder=ponder,
                )  # type: ignore[arg-type]
                for i in (0, 1)
            ]

        mode = "bwrap" if boxed else "none"
        on, off, unfrozen = configs(mode), configs("none", True), configs(mode, True)
        async with (
            Engine(off[0]) as a,
            Engine(off[1]) as b,
            Engine(on[0]) as c,
            Engine(on[1]) as d,
            Engine(unfrozen[0]) as e,
            Engine(unfrozen[1]) as f,
        ):
            for engine in (a, b, c, d, e, f):
                await engine.start("kamisado", args.variant)
            arena = ArenaRun([a, b], args.variant)
            sandboxed = ArenaRun([c, d], args.variant)
            pondering = ArenaRun([e, f], args.variant)
            _, sizes = await arena.batch(1)  # warm-up, and the size of a go line
            await sandboxed.batch(1)
            await pondering.batch(1)
            kind = c.freeze_kind
            timers = []
            for engine in (c, d):  # timed in the games themselves
                if engine._freezer is not None:
                    timers.append(TimedFreezer(engine._freezer))
                    engine._freezer = timers[-1]  # type: ignore[assignment]
            size = round(statistics.mean(sizes))
            line = b'{"type":"go","pad":"' + b"x" * max(0, size - 22) + b'"}\n'
            proc = await trio.lowlevel.open_process(
                [sys.executable, str(echo)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
            )
            reader = LineReader(proc.stdout)
            try:
                await raw_batch(proc, reader, line, 100)  # warm-up
                arena_batches, raw_batches, boxed_batches = [], [], []
                frozen_batches, ponder_batches = [], []
                for _ in range(args.rounds):  # interleaved: all see the same machine load
                    arena_batches.append((await arena.batch(args.decisions))[0])
                    raw_batches.append(await raw_batch(proc, reader, line, args.decisions))
                    frozen = (await sandboxed.batch(args.decisions))[0]
                    frozen_batches.append(frozen)
                    if boxed:
                        boxed_batches.append(frozen)
                    ponder_batches.append((await pondering.batch(args.decisions))[0])
            finally:
                with trio.CancelScope(shield=True):
                    await proc.stdin.aclose()
                    with trio.move_on_after(2):
                        await proc.wait()
                    proc.kill()
                    await proc.wait()
                    await proc.stdout.aclose()
    report(args, arena, arena_batches, raw_batches, sizes, size)
    freeze_us = TimedFreezer.cost_us(timers, "freeze")
    thaw_us = TimedFreezer.cost_us(timers, "thaw")
    freeze_report(kind, frozen_batches, ponder_batches, freeze_us, thaw_us)
    if boxed_batches:
        on_best = min(b.wall_us for b in boxed_batches)
        off_best = min(b.wall_us for b in arena_batches)
        on_med = statistics.median(b.wall_us for b in boxed_batches)
        off_med = statistics.median(b.wall_us for b in arena_batches)
        r_best = min(b.wall_us for b in raw_batches)
        print(
            f"sandboxed: per decision {on_best:.0f} us best batch, {on_med:.0f} us median; "
            f"ratio {on_best / r_best:.2f}x best (unconfined {off_best / r_best:.2f}x); "
            f"sandbox on/off per decision {on_best / off_best:.2f}x best, "
            f"{on_med / off_med:.2f}x median (target: 1 within noise); arena's own CPU "
            f"{statistics.median(b.cpu_us for b in boxed_batches):.0f} us per decision, median"
        )


class TimedFreezer:
    """Stands in for an engine's freezer and times each freeze and thaw it passes on: the
    cost inside real games, where the bot has run and slept between the two (the
    kernel then wakes its tasks to stop them, and again to go on), unlike a freeze
    and thaw in a tight loop of an idle bot, which costs a fraction of that."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.freeze_kind = getattr(inner, "freeze_kind", "")
        self.spent = {"freeze": 0.0, "thaw": 0.0}
        self.calls = {"freeze": 0, "thaw": 0}

    def freeze(self) -> None:
        t0 = time.perf_counter()
        self.inner.freeze()  # type: ignore[attr-defined]
        self.spent["freeze"] += time.perf_counter() - t0
        self.calls["freeze"] += 1

    def thaw(self) -> None:
        t0 = time.perf_counter()
        self.inner.thaw()  # type: ignore[attr-defined]
        self.spent["thaw"] += time.perf_counter() - t0
        self.calls["thaw"] += 1

    @staticmethod
    def cost_us(timers: list[TimedFreezer], what: str) -> float:
        calls = sum(t.calls[what] for t in timers)
        return sum(t.spent[what] for t in timers) / calls * 1e6 if calls else float("nan")


REAL_MOVE_MS = 100
"""A real move's thinking time for the per-move figure (``10+0.1`` leaves about this)."""


def freeze_report(
    kind: str, frozen: list[Batch], ponder: list[Batch], freeze_us: float, thaw_us: float
) -> None:
    """Issue 35's figure: the same games with the bot off move frozen and without."""
    on_best, off_best = min(b.wall_us for b in frozen), min(b.wall_us for b in ponder)
    on_med = statistics.median(b.wall_us for b in frozen)
    off_med = statistics.median(b.wall_us for b in ponder)
    extra = on_best - off_best
    print(
        f"freezing ({kind}): per decision {on_best:.0f} us frozen vs {off_best:.0f} us "
        f"not (ponder), {on_best / off_best:.2f}x best, {on_med / off_med:.2f}x median "
        "(target <= 1.2 with instant bots); arena's own CPU "
        f"{statistics.median(b.cpu_us for b in frozen):.0f} us vs "
        f"{statistics.median(b.cpu_us for b in ponder):.0f} us per decision, median"
    )
    print(
        f"freezing alone, in these games: freeze {freeze_us:.1f} us, thaw {thaw_us:.1f} us of "
        "the arena's time each (the thaw is charged "
        f"to the bot's clock); per real move of {REAL_MOVE_MS} ms: "
        f"{max(extra, freeze_us + thaw_us):.0f} us, "
        f"{max(extra, freeze_us + thaw_us) / (REAL_MOVE_MS * 10):.3f} % of the move"
    )


def report(
    args: argparse.Namespace,
    arena: ArenaRun,
    arena_batches: list[Batch],
    raw_batches: list[Batch],
    sizes: list[int],
    size: int,
) -> None:
    decisions = sum(b.ops for b in arena_batches)
    print(
        f"arena: {arena.games} {args.variant} games, {decisions} timed decisions in "
        f"{args.rounds} batches; go line {size} bytes on average ({min(sizes)}-{max(sizes)})"
    )

    def figures(batches: list[Batch]) -> tuple[float, float, float]:
        return (
            min(b.wall_us for b in batches),
            statistics.median(b.wall_us for b in batches),
            statistics.median(b.cpu_us for b in batches),
        )

    a_best, a_med, a_cpu = figures(arena_batches)
    r_best, r_med, r_cpu = figures(raw_batches)
    print(
        f"arena: {1e6 / a_best:,.0f} decisions/s; per decision {a_best:.0f} us best batch, "
        f"{a_med:.0f} us median, arena CPU {a_cpu:.0f} us"
    )
    print(
        f"raw:   {1e6 / r_best:,.0f} round trips/s; per {size}-byte echo round trip "
        f"{r_best:.0f} us best batch, {r_med:.0f} us median, driver CPU {r_cpu:.0f} us"
    )
    print(
        f"ratio: {a_best / r_best:.2f}x best, {a_med / r_med:.2f}x median "
        f"(arena decision / raw round trip; target <= 3)"
    )
    load = os.getloadavg()[0]
    print(
        f"load average {load:.2f} on {os.cpu_count()} CPUs: other processes slow the raw "
        "round trip (wake-up latency) more than the arena's CPU-bound work, so the ratio "
        "is only meaningful on a quiet machine"
    )
    rules = rules_cost_us(arena.game, args.variant)
    print(
        f"of which rules core: {rules:.0f} us per decision (observation text and fields, "
        f"history, legal, apply); without it {(a_best - rules) / r_best:.2f}x best"
    )
    a_cpu_best = min(b.cpu_us for b in arena_batches)
    print(
        f"arena's own CPU per decision: {a_cpu_best:.0f} us best batch, {a_cpu:.0f} us median "
        f"(this process's CPU time over the batches, its bots' excluded; {a_cpu - rules:.0f} us "
        f"without the rules core); fastchess: {FASTCHESS_CPU_US} us a move (issue 39's "
        "measurement, not this run's)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--decisions", type=int, default=1000, help="per batch (and round trips)")
    parser.add_argument("--rounds", type=int, default=7, help="interleaved batches of each")
    parser.add_argument("--variant", default="standard")
    parser.add_argument("--starts", type=int, default=20, help="process starts per figure")
    args = parser.parse_args()
    trio.run(main_async, args)


if __name__ == "__main__":
    main()
